// Which queued repair goes first (#28 part 3): rank + age - backoff, deterministic and starvation-free. Pure:
// decide/order.ts and its place in decide() (a free slot goes to the first of the pool's queue).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decideNow } from "../src/decide/decide.ts"
import {
  MAX_BACKOFF_MINUTES,
  ordered,
  placeOf,
  placeText,
  RANK_MINUTES,
  RANKS,
  rankOf,
  type Waiting
} from "../src/decide/order.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const w = (n: string, rank: Waiting["rank"], dueSince: number, setbacks = 0, reason = "R"): Waiting => ({
  node: n,
  reason,
  rank,
  dueSince,
  setbacks
})

describe("rank per reason", () => {
  it.each([
    ["AcceleratedHardwareReady", "NvidiaXID79Error", "fatal"],
    ["KernelReady", "ForkFailedOutOfPIDs", "fatal"],
    ["NetworkingReady", "IPAMDNotReady", "fault"],
    ["KernelReady", "AppCrash", "promoted"],
    ["AcceleratedHardwareReady", "DCGMHealthCode12", "promoted"],
    ["Ready", "KubeletNotReady", "unknown"],
    ["NetworkingReady", "NvidiaXID79Error", "unknown"]
  ])("%s %s: %s", (conditionType, reason, rank) => {
    expect(rankOf({ conditionType, reason })).toBe(rank)
  })
})

describe("the order", () => {
  it("a genuine fault overtakes a flood of lower-ranked repairs that waited less than the rank difference", () => {
    const flood = Array.from({ length: 200 }, (_, i) => w(`promoted-${i}`, "promoted", T0 - 20 * MIN))
    const genuine = w("gpu-1", "fatal", T0)
    const p = placeOf(genuine, flood, T0)
    expect(p.position).toBe(0)
    expect(p.of).toBe(201)
    expect(placeText(genuine, p)).toBe("position 1 of 201 (rank fatal +90m, waiting 0m, backoff -0m)")
    const order = ordered(flood, T0)
    const last = placeOf(order[199]!, [...flood, genuine], T0)
    expect(last.position).toBe(200)
    expect(placeText(order[199]!, last)).toContain(`next ahead: ${order[198]!.node} (promoted)`)
  })

  it("backoff: repairs of a reason that keep relapsing or failing go behind the same rank", () => {
    const o = ordered([w("a", "fatal", T0, 4, "Bad"), w("b", "fatal", T0 + MIN)], T0 + 2 * MIN)
    expect(o.map((x) => x.node)).toEqual(["b", "a"])
  })

  it("deterministic: ties by expiry, then name, whatever the input order", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(
          Array.from({ length: 12 }, (_, i) => w(`n${i % 4}-${i}`, RANKS[i % 4]!, T0 + (i % 3) * MIN, i % 2)),
          { minLength: 12, maxLength: 12 }
        ),
        (list) => {
          expect(ordered(list, T0 + 60 * MIN)).toEqual(ordered([...list].reverse(), T0 + 60 * MIN))
        }
      )
    )
  })

  it("starvation-free: a repair is ahead of everything due more than 3 ranks + the largest backoff after it", () => {
    const bound = (RANKS.length - 1) * RANK_MINUTES + MAX_BACKOFF_MINUTES
    fc.assert(
      fc.property(
        fc.constantFrom(...RANKS),
        fc.nat(20),
        fc.array(
          fc.tuple(fc.constantFrom(...RANKS), fc.nat(20), fc.integer({ min: bound * 60 + 1, max: 100_000 })),
          {
            maxLength: 40
          }
        ),
        fc.integer({ min: 0, max: 600 }),
        (rank, setbacks, later, extra) => {
          const now = T0 + 100_000_000 + extra * MIN
          const old = w("old", rank, T0, setbacks)
          const newer = later.map(([r, s, after], i) => w(`new-${i}`, r, T0 + after * 1000, s))
          expect(placeOf(old, newer, now).position).toBe(0)
        }
      )
    )
  })

  it("a simulated flood: 1 slot a minute, 3 promoted arrivals and a fatal one every 5 minutes; every repair is served within the bound", () => {
    const bound = (RANKS.length - 1) * RANK_MINUTES + MAX_BACKOFF_MINUTES
    let queue: Waiting[] = []
    const waited: Record<string, number> = {}
    let served = 0
    for (let minute = 0; minute < 600; minute++) {
      const now = T0 + minute * MIN
      // Arrivals: at most one a minute on average beyond service would grow the queue forever; this is 0.8 a minute.
      if (minute % 5 < 3) queue.push(w(`p-${minute}`, "promoted", now))
      if (minute % 5 === 0) queue.push(w(`f-${minute}`, "fatal", now))
      const next = ordered(queue, now)[0]
      if (next !== undefined) {
        waited[next.node] = (now - next.dueSince) / MIN
        queue = queue.filter((x) => x.node !== next.node)
        served++
      }
    }
    expect(served).toBeGreaterThan(450)
    expect(Math.max(...Object.values(waited))).toBeLessThanOrEqual(bound)
    // Every fatal fault went at once.
    expect(
      Object.entries(waited)
        .filter(([n]) => n.startsWith("f-"))
        .every(([, m]) => m === 0)
    ).toBe(true)
  })
})

describe("decide: a free slot goes to the first of the pool's queue", () => {
  const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
  const c = config({
    policies: [
      { conditionType: "KernelReady", status: "False", tolerationSeconds: 60 },
      { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 60 }
    ],
    maxUnhealthyPercent: 100,
    maxInFlight: "1",
    reasons: { AppCrash: { action: "Replace" } }
  })
  const statsOf = (all: ReadonlyArray<NodeView>) => {
    const counter = makePoolCounter(c)
    for (const n of all) counter.upsert(n)
    return counter.stats()
  }
  const promoted = node("promoted", [cond("KernelReady", "False", T0 - 10 * MIN, "AppCrash")], { pool: "p" })
  const gpu = node("gpu", [cond("AcceleratedHardwareReady", "False", T0 - 2 * MIN, "NvidiaXID79Error")], {
    pool: "p"
  })
  const waitingRoom: Waiting[] = [
    { node: "promoted", reason: "AppCrash", rank: "promoted", dueSince: T0 - 9 * MIN, setbacks: 0 }
  ]

  it.effect("the genuine fault takes the one slot; the promoted one, first to wait, is told its place", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const args = {
        config: c,
        stats: statsOf([promoted, gpu]),
        shifts: { _tag: "Known" as const, shifts: [] },
        waiting: () => [
          ...waitingRoom,
          { node: "gpu", reason: "NvidiaXID79Error", rank: "fatal" as const, dueSince: T0 - MIN, setbacks: 0 }
        ]
      }
      const g = yield* decideNow({ ...args, node: gpu })
      expect(g._tag).toBe("Repair")
      const p = yield* decideNow({ ...args, node: promoted })
      expect(p._tag).toBe("Queued")
      if (p._tag === "Queued") {
        expect(p.place.position).toBe(1)
        expect(p.place.ahead?.node).toBe("gpu")
      }
    })
  )
})
