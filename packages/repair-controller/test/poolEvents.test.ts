// #28 part 4: a breaker open, a relapse hold, a zone stand-down and queued repairs are Events on the Karpenter
// NodePool object too (as Karpenter's own NodeRepairBlocked), one per pool and cause per EVENT_DEDUPE_MS however
// many nodes and reconciles are behind it; none for a pool that is no NodePool or for the cluster scope.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { poolEvent } from "../src/controller/poolEvents.ts"
import { EVENT_DEDUPE_MS, makeEventRecorder } from "../src/kube/EventRecorder.ts"
import type { KubeShape, NodeEventInput } from "../src/kube/Kube.ts"

const world = () => {
  const written: NodeEventInput[] = []
  const kube = {
    emitNodeEvent: (_ns: string, e: NodeEventInput) => Effect.sync(() => void written.push(e))
  } as unknown as KubeShape
  const env = {
    events: makeEventRecorder(kube),
    karpenter: {
      nodePool: (name: string) => (name === "gpu" ? { metadata: { name, uid: "np-uid" } } : undefined)
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
})
