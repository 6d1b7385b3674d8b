// Contract 8, identity is proven, never read: a node (its kubelet credentials patch its own labels) that relabels
// itself into another pool or zone must not add to that pool's breaker count, a zone's unhealthy share or a
// pool's relapse ledger, and so must not hold repairs of other, genuinely broken machines there (a denial of
// repair). Where an unhealthy node counts is its owner's answer (owner/Placements.ts), fixed per uid/providerID.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { provenScope } from "../src/controller/relapseSighting.ts"
import { decide } from "../src/decide/decide.ts"
import type { InstanceFacts } from "../src/domain/Instance.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { Placement } from "../src/domain/Placement.ts"
import type { Ownership } from "../src/owner/ownership.ts"
import { makePlacements, PLACEMENT_RETRY_MS } from "../src/owner/Placements.ts"
import { cond, node } from "./fixtures.ts"

const ZONE = "topology.kubernetes.io/zone"
const config = Result.getOrThrow(
  decodeConfig({
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }],
    maxUnhealthyPercent: 20,
    maxInFlight: "100%",
    zoneBreaker: { maxUnhealthyPercent: 20, minUnhealthyNodes: 2 }
  })
)
const NOW = 120_000
const shifts = { _tag: "Known", shifts: [] } as const
const at = (name: string, pool: string, zone: string, unhealthy: boolean): NodeView => ({
  ...node(name, [cond("KernelReady", unhealthy ? "False" : "True", 0)], { pool, labels: { [ZONE]: zone } }),
  uid: `uid-${name}`
})
const proven = (pool: string | undefined, zone: string | undefined): Placement => ({
  _tag: "Proven",
  pool,
  zone
})

/**
 * Pools x and y of 5 nodes each, x in zone a, y in zone b. The owner proved every node where it was created; the
 * attacker x-0 then writes pool y and zone b on itself and reports itself unhealthy.
 */
const fleet = (attackerPlacement: Placement = proven("x", "a")) => {
  const truth = new Map<string, Placement>()
  const counter = makePoolCounter(config, (n) => truth.get(n.name) ?? { _tag: "Pending" })
  for (let i = 0; i < 5; i++) {
    for (const [pool, zone] of [
      ["x", "a"],
      ["y", "b"]
    ] as const) {
      const n = at(`${pool}-${i}`, pool, zone, false)
      truth.set(n.name, proven(pool, zone))
      counter.upsert(n)
    }
  }
  truth.set("x-0", attackerPlacement)
  counter.upsert(at("x-0", "y", "b", true))
  return { counter, truth }
}

const decideFor = (counter: ReturnType<typeof makePoolCounter>, n: NodeView, placement: Placement) =>
  decide({ config, node: n, stats: counter.stats(), shifts, now: NOW, placement })

describe("a node relabelled into another pool or zone counts where its owner proved it", () => {
  it("pool y's breaker: the relabelled node adds nothing; y's genuinely broken node is repaired", () => {
    const { counter } = fleet()
    const victim = at("y-1", "y", "b", true)
    counter.upsert(victim)
    expect(counter.stats().pools.get("y")).toMatchObject({ size: 5, unhealthy: 1 })
    expect(counter.stats().pools.get("x")).toMatchObject({ size: 5, unhealthy: 1 })
    // 20% of 5 allows 1 unhealthy: by the label the attacker made it 2, and y's breaker would open.
    expect(decideFor(counter, victim, proven("y", "b"))).toMatchObject({
      _tag: "Repair",
      pool: "y",
      zone: "b"
    })
  })

  it("zone b: the relabelled node adds nothing to its unhealthy share; no stand-down of b", () => {
    const { counter } = fleet()
    const victim = at("y-1", "y", "b", true)
    counter.upsert(victim)
    // Counted in zone a, where its instance is: 2 of 5 there (40%), b has 1 of 5 (20%, not over 20%).
    expect(counter.stats().zones?.get("b")).toEqual({ size: 5, unhealthy: 1 })
    expect(counter.stats().zones?.get("a")).toEqual({ size: 5, unhealthy: 1 })
    expect(decideFor(counter, victim, proven("y", "b"))._tag).toBe("Repair")
  })

  it("zone a's genuine stand-down is not lifted by a node that writes another zone on itself", () => {
    const { counter, truth } = fleet()
    // Zone a is sick: x-1 and x-2 are down (with the attacker, 3 of 5 in a); b is healthy.
    for (const name of ["x-1", "x-2"]) counter.upsert(at(name, "x", "a", true))
    // Two more of a's nodes move themselves to zone b by label: b would look sick too, and no single zone would
    // stand down (the zone breaker stands down only one zone over its threshold while the others are under).
    for (const name of ["x-3", "x-4"]) {
      truth.set(name, proven("x", "a"))
      counter.upsert(at(name, "x", "b", true))
    }
    const d = decideFor(counter, at("x-1", "x", "a", true), proven("x", "a"))
    expect(d).toMatchObject({ _tag: "ZoneStandDown", zone: { cause: "concentrated", zone: { zone: "a" } } })
  })

  it.effect(
    "once proven, a later relabel moves nothing; only a new uid or providerID is asked about again",
    () =>
      Effect.gen(function* () {
        const asked: string[] = []
        const placements = yield* makePlacements({
          poolLabel: "karpenter.sh/nodepool",
          prove: (n) => Effect.sync(() => asked.push(n.name)).pipe(Effect.as(owned("x", "a"))),
          settled: () => {},
          maxConcurrent: 2
        })
        const honest = at("x-0", "x", "a", true)
        yield* placements.ensure(honest)
        yield* TestClock.adjust(1)
        expect(placements.of(honest)).toEqual(proven("x", "a"))
        const relabelled = at("x-0", "y", "b", true)
        yield* placements.ensure(relabelled)
        yield* TestClock.adjust(1)
        expect(placements.of(relabelled)).toEqual(proven("x", "a"))
        expect(asked).toEqual(["x-0"])
        // Another Node object under the name (re-registered): not proven until asked about.
        const recreated = { ...relabelled, uid: "uid-new" }
        expect(placements.of(recreated)).toEqual({ _tag: "Pending" })
        yield* placements.ensure(recreated)
        yield* TestClock.adjust(1)
        expect(asked).toEqual(["x-0", "x-0"])
        const moved = { ...recreated, providerID: "kwok://elsewhere" }
        expect(placements.of(moved)).toEqual({ _tag: "Pending" })
      })
  )
})

const owned = (pool: string | undefined, zone: string | undefined): Ownership => ({
  _tag: "Owned",
  facts: {
    instanceId: "i-1",
    state: "running",
    ...(pool !== undefined ? { pool } : {}),
    ...(zone !== undefined ? { zone } : {}),
    launch: {},
    owner: { kind: "standalone" }
  } satisfies InstanceFacts
})

describe("a node not proven yet", () => {
  it("counts in the cluster only; a decision its claim could change waits for its proof (Unsettled)", () => {
    const { counter, truth } = fleet({ _tag: "Pending" })
    const victim = at("y-1", "y", "b", true)
    counter.upsert(victim)
    expect(counter.stats().pools.get("y")).toMatchObject({ unhealthy: 1 })
    expect(counter.stats().pools.get("x")).toMatchObject({ size: 4, unhealthy: 0 })
    expect(counter.stats().cluster).toMatchObject({ size: 10, unhealthy: 2 })
    expect(counter.stats().unproven).toEqual([{ pool: "y", zone: "b" }])
    // Not Blocked or stood down (no RepairBlocked, no open breaker, no stand-down of b): it waits a moment, as
    // the claim could be true (in y and in b it would cross both thresholds).
    expect(decideFor(counter, victim, proven("y", "b"))).toMatchObject({
      _tag: "Unsettled",
      why: "unproven nodes could change the zone breaker"
    })
    // With the zone breaker off, the breaker: in a y of 4, y's claim would open it (2 of 5, allowed 1).
    counter.remove("y-4")
    const noZones = { ...config, zoneBreaker: { ...config.zoneBreaker, enabled: false } }
    const stats = counter.stats()
    expect(
      decide({ config: noZones, node: victim, stats, shifts, now: NOW, placement: proven("y", "b") })
    ).toMatchObject({
      _tag: "Unsettled",
      scope: "y"
    })
    // The proof answers: pool x. y's node is repaired.
    truth.set("x-0", proven("x", "a"))
    counter.recount("x-0")
    expect(counter.stats().unproven).toEqual([])
    expect(decideFor(counter, victim, proven("y", "b"))._tag).toBe("Repair")
    expect(
      decide({
        config: noZones,
        node: victim,
        stats: counter.stats(),
        shifts,
        now: NOW,
        placement: proven("y", "b")
      })._tag
    ).toBe("Repair")
  })

  it("its own decision waits for its proof; a machine the cloud does not vouch for is refused (Unplaced)", () => {
    const { counter } = fleet({ _tag: "Unprovable", why: "providerID names another instance" })
    const attacker = at("x-0", "y", "b", true)
    expect(counter.stats().unproven).toEqual([])
    expect(counter.stats().pools.get("y")).toMatchObject({ size: 5, unhealthy: 0 })
    expect(decideFor(counter, attacker, { _tag: "Pending" })._tag).toBe("Unsettled")
    expect(decideFor(counter, attacker, { _tag: "Unprovable", why: "no" })).toMatchObject({
      _tag: "Unplaced",
      why: "no"
    })
  })

  it.effect(
    "a retryable answer is asked again after PLACEMENT_RETRY_MS; at most maxConcurrent proofs at once",
    () =>
      Effect.gen(function* () {
        let inFlight = 0
        let most = 0
        let answer: Ownership = { _tag: "Retry", error: "throttled" }
        const settled: string[] = []
        const placements = yield* makePlacements({
          poolLabel: "karpenter.sh/nodepool",
          prove: () =>
            Effect.sync(() => {
              inFlight++
              most = Math.max(most, inFlight)
            }).pipe(
              Effect.andThen(Effect.sleep(100)),
              Effect.andThen(Effect.sync(() => inFlight--)),
              Effect.andThen(Effect.suspend(() => Effect.succeed(answer)))
            ),
          settled: (n) => void settled.push(n),
          maxConcurrent: 2
        })
        const nodes = Array.from({ length: 5 }, (_, i) => at(`n-${i}`, "y", "b", true))
        for (const n of nodes) yield* placements.ensure(n)
        yield* TestClock.adjust(1000)
        expect(most).toBe(2)
        expect(settled).toEqual([])
        expect(placements.of(nodes[0]!)).toEqual({ _tag: "Pending" })
        answer = owned("x", "a")
        yield* placements.ensure(nodes[0]!)
        yield* TestClock.adjust(100)
        expect(settled).toEqual([])
        yield* TestClock.adjust(PLACEMENT_RETRY_MS)
        yield* placements.ensure(nodes[0]!)
        yield* TestClock.adjust(100)
        expect(settled).toEqual(["n-0"])
        expect(placements.of(nodes[0]!)).toEqual(proven("x", "a"))
      })
  )

  it.effect(
    "the owner's answer places it: the NodeClaim's pool while Karpenter acts; the label at the proof where the owner names none; a refusal without the cloud's facts is Unprovable",
    () =>
      Effect.gen(function* () {
        const answers: Record<string, Ownership> = {
          acting: {
            _tag: "OwnerActing",
            owner: "Karpenter",
            why: "deleting",
            facts: (owned("x", "a") as { facts: InstanceFacts }).facts
          },
          untagged: owned(undefined, undefined),
          forged: { _tag: "Refused", cause: "identity", why: "instance i-2 is not node forged" }
        }
        const placements = yield* makePlacements({
          poolLabel: "karpenter.sh/nodepool",
          prove: (n) => Effect.succeed(answers[n.name]!),
          settled: () => {},
          maxConcurrent: 4
        })
        const fiber = yield* Effect.forkChild(
          Effect.forEach(["acting", "untagged", "forged"], (n) => placements.ensure(at(n, "y", "b", true)))
        )
        yield* Fiber.join(fiber)
        yield* TestClock.adjust(1)
        expect(placements.of(at("acting", "y", "b", true))).toEqual(proven("x", "a"))
        expect(placements.of(at("untagged", "y", "b", true))).toEqual(proven("y", "b"))
        // The label was fixed when proven: a later relabel does not move it.
        expect(placements.of(at("untagged", "z", "c", true))).toEqual(proven("y", "b"))
        expect(placements.of(at("forged", "y", "b", true))).toMatchObject({ _tag: "Unprovable" })
      })
  )
})

describe("relapse sightings count in the proven pool", () => {
  const envWith = (placement: Placement, record?: { pool?: string; uid: string }) =>
    ({
      store: {
        get: () =>
          record === undefined
            ? { _tag: "None" }
            : {
                _tag: "Record",
                record: { node: { uid: record.uid, ...(record.pool ? { pool: record.pool } : {}) } }
              }
      },
      placements: { of: () => placement }
    }) as unknown as ControllerEnv

  it("the proven pool, the record's while under repair, none while unproven: never the label", () => {
    const relabelled = at("x-0", "y", "b", true)
    expect(provenScope(envWith(proven("x", "a")), relabelled)).toBe("x")
    expect(provenScope(envWith(proven(undefined, "a")), relabelled)).toBe("<cluster>")
    expect(provenScope(envWith({ _tag: "Pending" }), relabelled)).toBeUndefined()
    expect(provenScope(envWith({ _tag: "Unprovable", why: "" }), relabelled)).toBeUndefined()
    expect(provenScope(envWith({ _tag: "Pending" }, { pool: "x", uid: "uid-x-0" }), relabelled)).toBe("x")
    // A record of another Node object under the name is not this node's.
    expect(provenScope(envWith({ _tag: "Pending" }, { pool: "x", uid: "old" }), relabelled)).toBeUndefined()
  })
})
