// Which queued repair goes first (#28 part 3, #37): rank + age (capped) - backoff, deterministic, first come first
// served within a rank, and no age outranks severity for ever. Pure:
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
  MAX_AGE_MINUTES,
  MAX_BACKOFF_MINUTES,
  ordered,
  placeOf,
  placeText,
  RANK_MINUTES,
  RANKS,
  rankOf,
  SPAN_MINUTES,
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

  it("first come, first served within a rank and backoff, however long they have waited (past the age cap too)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RANKS),
        fc.nat(10),
        fc.uniqueArray(fc.integer({ min: -1_000_000, max: 1_000_000 }), { minLength: 2, maxLength: 30 }),
        fc.integer({ min: 0, max: 10_000 }),
        (rank, setbacks, dues, later) => {
          const now = T0 + 1_000_000 * MIN + later * MIN
          const list = dues.map((d, i) => w(`n${i}`, rank, T0 + d * MIN, setbacks))
          const byDue = [...list].sort((a, b) => a.dueSince - b.dueSince)
          expect(ordered(list, now).map((x) => x.node)).toEqual(byDue.map((x) => x.node))
        }
      )
    )
  })

  it("across ranks: ahead of everything due more than SPAN after it, while those have waited less than MAX_AGE - SPAN", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RANKS),
        fc.nat(20),
        fc.integer({ min: SPAN_MINUTES + 1, max: 100_000 }),
        fc.array(
          fc.tuple(fc.constantFrom(...RANKS), fc.nat(20), fc.double({ min: 0, max: 1, noNaN: true })),
          {
            maxLength: 40
          }
        ),
        (rank, setbacks, oldAge, later) => {
          // Each newer one has waited less than both (old's wait - SPAN) and (MAX_AGE - SPAN), in minutes.
          const most = Math.min(oldAge - SPAN_MINUTES, MAX_AGE_MINUTES - SPAN_MINUTES) - 1
          const newer = later.map(([r, s, f], i) => w(`new-${i}`, r, T0 - Math.floor(f * most) * MIN, s))
          expect(placeOf(w("old", rank, T0 - oldAge * MIN, setbacks), newer, T0).position).toBe(0)
        }
      )
    )
  })

  it("no age outranks severity for ever: past MAX_AGE, nothing of a lower rank and no smaller backoff is ahead", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: RANKS.length - 1 }),
        fc.nat(8),
        fc.array(fc.tuple(fc.nat(RANKS.length - 1), fc.nat(8), fc.integer({ min: 0, max: 60_000_000 })), {
          maxLength: 30
        }),
        fc.integer({ min: 0, max: 10_000 }),
        (rank, setbacks, others, extra) => {
          const now = T0 + MAX_AGE_MINUTES * MIN + extra * MIN
          const me = w("me", RANKS[rank]!, T0, setbacks)
          // Lower rank, no smaller backoff, due at any time back to 1970 (a forged lastTransitionTime's age).
          const lower = others
            .filter(([r]) => r < rank)
            .map(([r, s, ago], i) => w(`low-${i}`, RANKS[r]!, T0 - ago * MIN, setbacks + s))
          expect(placeOf(me, lower, now).position).toBe(0)
        }
      )
    )
    // The figure the attack of issue #37 showed: 29,941,108 minutes of age counts MAX_AGE_MINUTES.
    const forged = w("forged", "promoted", Date.parse("1970-01-02T00:00:00Z"))
    const p = placeOf(forged, [w("gpu", "fatal", T0 - MAX_AGE_MINUTES * MIN)], T0)
    expect(p.position).toBe(1)
    expect(p.priority.score).toBe(MAX_AGE_MINUTES)
    expect(placeText(forged, p)).toContain(`(counts ${MAX_AGE_MINUTES}m)`)
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
