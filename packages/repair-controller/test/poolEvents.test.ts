// #28 part 4: a breaker open, a relapse hold, a zone stand-down and queued repairs are Events on the Karpenter
// NodePool object too (as Karpenter's own NodeRepairBlocked), one per pool and cause per EVENT_DEDUPE_MS however
// many nodes and reconciles are behind it; none for a pool that is no NodePool or for the cluster scope.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { poolEvent } from "../src/controller/poolEvents.ts"
import { resolveConfig } from "../src/config/ControllerConfig.ts"
import { type GateVerdict, standDownKey, standDownPoolNote } from "../src/decide/zonalShiftGate.ts"
import { EVENT_DEDUPE_MS, makeEventRecorder } from "../src/kube/EventRecorder.ts"
import type { KubeShape, NodeEventInput } from "../src/kube/Kube.ts"
import type { KarpenterCache } from "../src/karpenter/KarpenterCache.ts"
import { karpenterPools } from "../src/owner/poolOwner.ts"

const world = () => {
  const written: NodeEventInput[] = []
  const kube = {
    emitNodeEvent: (_ns: string, e: NodeEventInput) => Effect.sync(() => void written.push(e))
  } as unknown as KubeShape
  const env = {
    events: makeEventRecorder(kube),
    owners: {
      pools: karpenterPools({
        nodePool: (name: string) => (name === "gpu" ? { metadata: { name, uid: "np-uid" } } : undefined)
      } as unknown as KarpenterCache)
    }
  } as unknown as ControllerEnv
  return { env, written }
}

describe("pool-wide Events on the Karpenter NodePool", () => {
  it.effect("one per pool and cause per dedupe window, on the NodePool object", () =>
    Effect.gen(function* () {
      const { env, written } = world()
      for (let i = 0; i < 5; i++) {
        yield* poolEvent(env, "gpu", "Blocked", "Warning", "RepairBlocked", `node ${i}`)
        yield* TestClock.adjust(1000)
      }
      yield* poolEvent(env, "gpu", "Held/XID79", "Warning", "RepairHeld", "held")
      yield* TestClock.adjust(1)
      expect(written.map((e) => [e.reason, e.node])).toEqual([
        ["RepairBlocked", { name: "gpu", uid: "np-uid", apiVersion: "karpenter.sh/v1", kind: "NodePool" }],
        ["RepairHeld", { name: "gpu", uid: "np-uid", apiVersion: "karpenter.sh/v1", kind: "NodePool" }]
      ])
      yield* TestClock.adjust(EVENT_DEDUPE_MS)
      yield* poolEvent(env, "gpu", "Blocked", "Warning", "RepairBlocked", "again")
      yield* TestClock.adjust(1)
      expect(written.map((e) => e.note)).toEqual(["node 0", "held", "again"])
    })
  )

  it.effect("none for a pool without a NodePool object, or for the cluster scope", () =>
    Effect.gen(function* () {
      const { env, written } = world()
      yield* poolEvent(env, "plain", "Blocked", "Warning", "RepairBlocked", "x")
      yield* poolEvent(env, "<cluster>", "Blocked", "Warning", "RepairBlocked", "x")
      yield* poolEvent(env, undefined, "Blocked", "Warning", "RepairBlocked", "x")
      yield* TestClock.adjust(1)
      expect(written).toEqual([])
    })
  )

  it.effect(
    "a zonal-shift stand-down: one RepairStandDown per shift on the NodePool, naming the zone and what lifts it",
    () =>
      Effect.gen(function* () {
        const { env, written } = world()
        const config = resolveConfig({ zonalShift: { scope: "zone" } })
        const shift = (expiresAt: string): Extract<GateVerdict, { _tag: "StandDown" }> => ({
          _tag: "StandDown",
          cause: "shift",
          shift: {
            kind: "zonal-shift",
            zone: "us-west-2a",
            zoneId: "usw2-az1",
            expiresAt: new Date(expiresAt),
            id: "6d2a1c2e-0000-4a11-9e0f-3c1a2b3c4d5e"
          }
        })
        const standDown = (v: Extract<GateVerdict, { _tag: "StandDown" }>) =>
          poolEvent(env, "gpu", standDownKey(v), "Warning", "RepairStandDown", standDownPoolNote(config, v))
        // Three of the pool's nodes, reconciled again and again while the shift holds: one Event.
        for (let i = 0; i < 6; i++) {
          yield* standDown(shift("2026-03-01T12:00:00.000Z"))
          yield* TestClock.adjust(1000)
        }
        // The shift is extended (a new expiry): what lifts it changed, so the pool is told again.
        yield* standDown(shift("2026-03-01T18:00:00.000Z"))
        // The provider stops answering: failing closed is a cause of its own.
        yield* standDown({ _tag: "StandDown", cause: "unknown", error: "ListZonalShifts: 503" })
        yield* standDown({ _tag: "StandDown", cause: "unknown", error: "ListZonalShifts: 503" })
        yield* TestClock.adjust(1)
        expect(written.map((e) => [e.reason, e.type, e.node.kind, e.node.name])).toEqual([
          ["RepairStandDown", "Warning", "NodePool", "gpu"],
          ["RepairStandDown", "Warning", "NodePool", "gpu"],
          ["RepairStandDown", "Warning", "NodePool", "gpu"]
        ])
        expect(written.map((e) => e.note)).toEqual([
          "repairs of this NodePool's nodes in us-west-2a stand down: a zonal shift moves traffic away from zone us-west-2a; it lifts when the shift expires at 2026-03-01T12:00:00.000Z, or earlier when the shift is cancelled (zonal shift 6d2a1c2e-0000-4a11-9e0f-3c1a2b3c4d5e)",
          "repairs of this NodePool's nodes in us-west-2a stand down: a zonal shift moves traffic away from zone us-west-2a; it lifts when the shift expires at 2026-03-01T18:00:00.000Z, or earlier when the shift is cancelled (zonal shift 6d2a1c2e-0000-4a11-9e0f-3c1a2b3c4d5e)",
          "repairs of this NodePool's nodes stand down: the cloud provider cannot say whether a zonal shift is active (ListZonalShifts: 503); failing closed (zonalShift.onUnknown: standDown) until it answers again"
        ])
      })
  )

  it("an autoshift under scope cluster: the whole pool stands down until it expires or AWS ends it", () => {
    const note = standDownPoolNote(resolveConfig({}), {
      _tag: "StandDown",
      cause: "shift",
      shift: { kind: "autoshift", zoneId: "use1-az4", expiresAt: new Date("2026-03-02T00:00:00.000Z") }
    })
    expect(note).toBe(
      "repairs of this NodePool's nodes stand down (zonalShift.scope: cluster): an autoshift moves traffic away from zone use1-az4; it lifts when the shift expires at 2026-03-02T00:00:00.000Z, or earlier when AWS ends the autoshift"
    )
  })
})
