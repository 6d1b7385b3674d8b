// Times a node writes never count before what the controller has seen (#37 item 3): the toleration runs from the
// later of lastTransitionTime and the controller's first sight (the Node's creationTimestamp a floor), and the queue
// counts ages from there. Pure (decide/toleration.ts, decide/policyMatch.ts, decide/order.ts through decide) with the
// first sights taken by the real SightingStore (its journal: sightingStore.test.ts).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { makeSightingStore } from "../src/controller/SightingStore.ts"
import { decideNow } from "../src/decide/decide.ts"
import { placeText, type Waiting } from "../src/decide/order.ts"
import { matchPolicies } from "../src/decide/policyMatch.ts"
import { MAX_CLOCK_SKEW_MS, toleratedFrom } from "../src/decide/toleratedFrom.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const EPOCH_DAY_2 = Date.parse("1970-01-02T00:00:00Z")

describe("toleratedFrom: the later of lastTransitionTime and the first sight, never before the Node", () => {
  const c = (lastTransitionTime: number, firstSeen?: number) => ({
    type: "KernelReady",
    status: "False",
    lastTransitionTime,
    ...(firstSeen !== undefined ? { firstSeen } : {})
  })
  it.each([
    ["a 1970 time counts from the first sight", c(EPOCH_DAY_2, T0), undefined, T0],
    [
      "a time before the first sight (a restart that kept it) counts from the first sight",
      c(T0 - MIN, T0),
      undefined,
      T0
    ],
    ["the writer's clock a little ahead: its time", c(T0 + 30_000, T0), undefined, T0 + 30_000],
    [
      "far ahead (2099): at most the skew after the first sight",
      c(Date.parse("2099-01-01T00:00:00Z"), T0),
      undefined,
      T0 + MAX_CLOCK_SKEW_MS
    ],
    [
      "no first sight (a replay or test): never before the Node's creation",
      c(EPOCH_DAY_2),
      T0 - 5 * MIN,
      T0 - 5 * MIN
    ],
    [
      "the Node created after the first sight (clock skew): its creation",
      c(T0 - MIN, T0),
      T0 + 1000,
      T0 + 1000
    ]
  ])("%s", (_what, condition, createdAt, expected) => {
    expect(toleratedFrom(condition, createdAt)).toBe(expected)
  })

  it("no lastTransitionTime: it never expires, as before", () => {
    expect(toleratedFrom({ type: "KernelReady", status: "False", firstSeen: T0 }, T0)).toBeUndefined()
  })

  it("a match expires a toleration after its start, not after what the node wrote", () => {
    const c1 = Result.getOrThrow(
      decodeConfig({ policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 600 }] })
    )
    const [m] = matchPolicies(c1, {
      ...node("n", [{ ...cond("KernelReady", "False", EPOCH_DAY_2), firstSeen: T0 }]),
      createdAt: T0 - 60 * MIN
    })
    expect(m?.toleratedFrom).toBe(T0)
    expect(m?.expiresAt).toBe(T0 + 600_000)
    expect(m?.lastTransitionTime).toBe(EPOCH_DAY_2)
  })
})

describe("attack: a 1970 lastTransitionTime neither skips its toleration nor jumps the queue", () => {
  // KernelReady AppCrash is a catalog Event promoted to a Condition: the lowest rank. Replace it, to be repaired.
  const config = Result.getOrThrow(
    decodeConfig({
      policies: [
        { conditionType: "KernelReady", status: "False", tolerationSeconds: 600 },
        { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 600 }
      ],
      maxUnhealthyPercent: 100,
      maxInFlight: "1",
      reasons: { AppCrash: { action: "Replace" } }
    })
  )
  const sightings = makeSightingStore({} as KubeShape, config, () => Effect.void)
  const created = T0 - 24 * 60 * MIN
  const at = (n: NodeView): NodeView => ({ ...n, uid: `uid-${n.name}`, createdAt: created })
  // The genuine fatal fault: failed, and seen, 30 minutes before the attack.
  const gpu = at(
    node("gpu", [cond("AcceleratedHardwareReady", "False", T0 - 30 * MIN, "NvidiaXID79Error")], { pool: "p" })
  )
  // The attacker writes its lowest-rank condition with a 1970 lastTransitionTime; the controller sees it at T0.
  const forger = at(node("forger", [cond("KernelReady", "False", EPOCH_DAY_2, "AppCrash")], { pool: "p" }))
  const busy = at(node("busy", [], { pool: "p" }))
  const gpuSeen = sightings.see(gpu, T0 - 30 * MIN)
  const forgerSeen = sightings.see(forger, T0)

  const decideAt = (n: NodeView, waiting: ReadonlyArray<Waiting>, repairing: ReadonlyArray<string>) => {
    const counter = makePoolCounter(config)
    for (const x of [gpuSeen, forgerSeen, busy]) counter.upsert(x)
    for (const name of repairing) counter.setRepair(name, { pool: "p", zone: undefined, failed: false })
    return decideNow({
      config,
      node: n,
      stats: counter.stats(),
      shifts: { _tag: "Known", shifts: [] },
      waiting: () => waiting
    })
  }

  it.effect("its toleration runs from the first sight: still tolerating 9 minutes later", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 9 * MIN)
      const d = yield* decideAt(sightings.see(forger, T0 + 9 * MIN), [], [])
      expect(d._tag).toBe("Tolerating")
      if (d._tag === "Tolerating") expect(d.requeueAfterMs).toBe(MIN)
    })
  )

  it.effect(
    "due, it queues behind the fatal fault that waited longer, and its Event says how long it truly waited",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 11 * MIN)
        // One slot, taken by "busy": both wait. Each decision puts itself in the waiting room, as the Reconciler does.
        const g = yield* decideAt(gpuSeen, [], ["busy"])
        expect(g._tag).toBe("Queued")
        if (g._tag !== "Queued") return
        const f = yield* decideAt(sightings.see(forger, T0 + 11 * MIN), [g.waiting], ["busy"])
        expect(f._tag).toBe("Queued")
        if (f._tag !== "Queued") return
        expect(f.place.position).toBe(1)
        expect(f.place.ahead?.node).toBe("gpu")
        expect(placeText(f.waiting, f.place)).toContain("rank promoted +0m, waiting 1m,")
        // The slot frees: it goes to the fatal fault, and the forger still waits.
        const g2 = yield* decideAt(gpuSeen, [g.waiting, f.waiting], [])
        expect(g2._tag).toBe("Repair")
        const f2 = yield* decideAt(sightings.see(forger, T0 + 11 * MIN), [g.waiting, f.waiting], [])
        expect(f2._tag).toBe("Queued")
      })
  )
})
