// Karpenter-aware decisions and objects (issue #16), pure: the in-flight budget, the NodePool veto, the breaker
// sized by NodeClaims, when Karpenter is already acting, and the replacement NodeClaim nodemend creates.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decideNow } from "../src/decide/decide.ts"
import type { NodePoolFacts } from "../src/domain/NodePool.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import {
  karpenterIsActing,
  type NodeClaim,
  replacementName,
  replacementNodeClaim
} from "../src/karpenter/NodeClaims.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))

const decideIn = (
  c: ControllerConfig,
  n: NodeView,
  all: ReadonlyArray<NodeView>,
  repairing: ReadonlyArray<string>,
  nodePool?: NodePoolFacts
) => {
  const counter = makePoolCounter(c)
  for (const x of all) counter.upsert(x)
  for (const name of repairing) counter.setRepair(name, { byLabel: true, failed: false })
  return decideNow({
    config: c,
    node: n,
    stats: counter.stats(),
    shifts: { _tag: "Known", shifts: [] },
    ...(nodePool !== undefined ? { nodePool } : {})
  })
}

const pool = (bad: number, ok: number) => [
  ...Array.from({ length: bad }, (_, i) => node(`bad-${i}`, [cond("Ready", "False", T0)], { pool: "p" })),
  ...Array.from({ length: ok }, (_, i) => node(`ok-${i}`, [cond("Ready", "True", T0)], { pool: "p" }))
]

describe("in-flight budget", () => {
  it.effect("2 of 10 due: the first repairs, the second waits for the slot and says why (10% default)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config()
      const all = pool(2, 8)
      expect((yield* decideIn(c, all[0] as NodeView, all, []))._tag).toBe("Repair")
      const second = yield* decideIn(c, all[1] as NodeView, all, ["bad-0"])
      expect(second).toMatchObject({ _tag: "Queued", scope: "p", inFlight: 1, budget: { allowed: 1 } })
    })
  )

  it.effect(
    "a replacement up before the drain does not raise the bound (10% of 10 stays 1 with 11 NodeClaims)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 31 * MIN)
        const all = pool(2, 8)
        const np: NodePoolFacts = { claims: 11, vetoed: false, budgets: [{ nodes: "10%" }] }
        const d = yield* decideIn(config(), all[1] as NodeView, all, ["bad-0"], np)
        expect(d).toMatchObject({ _tag: "Queued", inFlight: 1, budget: { allowed: 1 } })
      })
  )

  it.effect("maxInFlight per pool, and a NodePool's own budget when it is one", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const all = pool(2, 8)
      const wide = config({ pools: { p: { maxInFlight: "2" } } })
      expect((yield* decideIn(wide, all[1] as NodeView, all, ["bad-0"]))._tag).toBe("Repair")
      const np: NodePoolFacts = {
        claims: 10,
        vetoed: false,
        budgets: [{ nodes: "0", reasons: ["Unhealthy"] }]
      }
      const d = yield* decideIn(wide, all[1] as NodeView, all, [], np)
      expect(d).toMatchObject({
        _tag: "Queued",
        budget: { allowed: 0, source: 'nodepool p disruption budget "0"' }
      })
    })
  )
})

describe("Karpenter NodePools", () => {
  it.effect("the nodemend.io/do-not-repair annotation on a NodePool vetoes its nodes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const all = pool(1, 9)
      const d = yield* decideIn(config(), all[0] as NodeView, all, [], {
        claims: 10,
        vetoed: true,
        budgets: []
      })
      expect(d).toMatchObject({ _tag: "Vetoed", veto: "nodepool-annotation" })
    })
  )

  it.effect("the breaker sizes a NodePool by its NodeClaims, registered or not (as Karpenter)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      // 2 unhealthy of 5 Nodes is over 20%; with 5 more NodeClaims launching it is 2 of 10.
      const all = pool(2, 3)
      const c = config({ maxInFlight: "100%" })
      expect(
        (yield* decideIn(c, all[0] as NodeView, all, [], { claims: 5, vetoed: false, budgets: [] }))._tag
      ).toBe("Blocked")
      const d = yield* decideIn(c, all[0] as NodeView, all, [], { claims: 10, vetoed: false, budgets: [] })
      expect(d).toMatchObject({ _tag: "Repair", breaker: { size: 10, unhealthy: 2, allowed: 2 } })
    })
  )
})

const claim = (over: Partial<NodeClaim> = {}): NodeClaim => ({
  metadata: {
    name: "gpu-abcde",
    labels: {
      "karpenter.sh/nodepool": "gpu",
      "topology.kubernetes.io/zone": "test-zone-a",
      "karpenter.sh/registered": "true"
    },
    annotations: {
      "karpenter.sh/nodepool-hash": "123",
      "karpenter.sh/nodepool-hash-version": "v3",
      other: "x"
    },
    ownerReferences: [{ apiVersion: "karpenter.sh/v1", kind: "NodePool", name: "gpu", uid: "u" }]
  },
  spec: {
    nodeClassRef: { group: "karpenter.kwok.sh", kind: "KWOKNodeClass", name: "default" },
    requirements: [{ key: "node.kubernetes.io/instance-type", operator: "In", values: ["c-4x-amd64-linux"] }]
  },
  status: { providerID: "kwok://n1", nodeName: "n1", conditions: [{ type: "Initialized", status: "True" }] },
  ...over
})

describe("NodeClaims", () => {
  it("Karpenter is acting on a NodeClaim being deleted or carrying a DisruptionReason", () => {
    expect(karpenterIsActing(claim())).toBeUndefined()
    expect(
      karpenterIsActing(
        claim({ metadata: { ...claim().metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } })
      )
    ).toMatch(/being deleted/)
    const disrupted = claim({
      status: { conditions: [{ type: "DisruptionReason", status: "True", reason: "Unhealthy" }] }
    })
    expect(karpenterIsActing(disrupted)).toMatch(/Unhealthy/)
  })

  it("the replacement copies the spec and the pool's labels and hash, not the old instance's zone or lifecycle", () => {
    const np = {
      metadata: { name: "gpu" },
      spec: { template: { metadata: { labels: { team: "ml" } } } }
    }
    const r = replacementNodeClaim(claim(), np, {
      name: replacementName("gpu-abcde", "0a1b2c3d-mk1"),
      replacesNode: "n1",
      replacementOfLabel: "nodemend.io/replacement-of",
      avoidZones: ["test-zone-b"]
    })
    expect(r.metadata.name).toBe("gpu-abcde-r-0a1b2c3d-mk1")
    expect(r.metadata.labels).toEqual({ team: "ml", "karpenter.sh/nodepool": "gpu" })
    expect(r.metadata.annotations).toEqual({
      "karpenter.sh/nodepool-hash": "123",
      "karpenter.sh/nodepool-hash-version": "v3",
      "karpenter.sh/do-not-disrupt": "true",
      "nodemend.io/replacement-of": "n1"
    })
    expect(r.metadata.ownerReferences).toEqual(claim().metadata.ownerReferences)
    expect((r.spec as Record<string, unknown>).nodeClassRef).toEqual(claim().spec.nodeClassRef)
    expect(r.spec.requirements).toEqual([
      { key: "node.kubernetes.io/instance-type", operator: "In", values: ["c-4x-amd64-linux"] },
      { key: "topology.kubernetes.io/zone", operator: "NotIn", values: ["test-zone-b"] }
    ])
  })

  it("replacement names are DNS-1123 and at most 63 characters", () => {
    const n = replacementName("x".repeat(80), "ABC_def-123")
    expect(n.length).toBeLessThanOrEqual(63)
    expect(n).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
  })
})
