// RepairRequests as one more match of decide() (issue #41 item 4, ADR 0020): who asked must be proven by the
// admission policy as shipped (refused otherwise: fail closed), the reason must be a catalog code or the manual
// one, and a proven request goes through every gate like a fault's repair; a held one says what lifts it, and the
// record keeps who asked. No cluster; TestClock for time.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { parseAllDocuments } from "yaml"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { policyProofOf } from "../src/controller/requestPolicy.ts"
import { decideNow } from "../src/decide/decide.ts"
import {
  type PolicyProof,
  POLICY_SETTLE_MS,
  type RequestView,
  requestedMatch,
  requestRefusal
} from "../src/decide/repairRequest.ts"
import { requestStatusOf } from "../src/decide/requestStatus.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { parseLedger } from "../src/domain/RelapseLedger.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-12-07T00:00:00Z")
const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const IN_FORCE: PolicyProof = { _tag: "InForce", since: T0 - 60 * MIN }

const request = (over: Partial<RequestView> = {}): RequestView => ({
  namespace: "nodemend-system",
  name: "straggler-1",
  uid: "rr-uid-1",
  createdAt: T0,
  nodeName: "slow",
  reason: "ManualRepairRequested",
  message: "rank 17 is 40% slower than its peers",
  requestedBy: "alice@example.com",
  ...over
})

/** The shipped policy and binding (deploy/controller/admission-policy.yaml), as the API server would answer them. */
const shipped = () => {
  const text = readFileSync(
    new URL("../../../deploy/controller/admission-policy.yaml", import.meta.url),
    "utf8"
  )
  const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string } })
  const pick = (kind: string) => {
    const o = docs.find((d) => d.kind === kind && d.metadata.name === "nodemend-repair-requests")
    return { ...o, metadata: { ...o?.metadata, creationTimestamp: "2026-12-06T00:00:00Z" } } as Record<
      string,
      unknown
    >
  }
  return { policy: pick("ValidatingAdmissionPolicy"), binding: pick("ValidatingAdmissionPolicyBinding") }
}

describe("who asked is proven, else refused (fail closed)", () => {
  it("the shipped policy and binding are in force; without either, or weakened, they are not", () => {
    const { policy, binding } = shipped()
    expect(policyProofOf(policy, binding)).toEqual({
      _tag: "InForce",
      since: Date.parse("2026-12-06T00:00:00Z")
    })
    expect(policyProofOf(undefined, binding)._tag).toBe("Absent")
    expect(policyProofOf(policy, undefined)._tag).toBe("Absent")
    const spec = binding.spec as Record<string, unknown>
    const policySpec = policy.spec as Record<string, unknown>
    expect(policyProofOf(policy, { ...binding, spec: { ...spec, validationActions: ["Audit"] } })._tag).toBe(
      "Absent"
    )
    expect(policyProofOf({ ...policy, spec: { ...policySpec, failurePolicy: "Ignore" } }, binding)._tag).toBe(
      "Absent"
    )
    expect(policyProofOf({ ...policy, spec: { ...policySpec, validations: [] } }, binding)._tag).toBe(
      "Absent"
    )
  })

  it("a request is refused without the policy, when it is older than the policy, or when a node asks", () => {
    const c = config()
    expect(requestRefusal(c, request(), IN_FORCE)).toBeUndefined()
    expect(requestRefusal(c, request(), { _tag: "Absent", why: "not installed" })).toMatch(
      /not proven: not installed/
    )
    expect(requestRefusal(c, request(), { _tag: "InForce", since: T0 - POLICY_SETTLE_MS + 1000 })).toMatch(
      /before the admission policy was in force/
    )
    expect(requestRefusal(c, request({ createdAt: Number.NaN }), IN_FORCE)).toMatch(/not proven/)
    expect(requestRefusal(c, request({ requestedBy: "system:node:slow" }), IN_FORCE)).toMatch(/is a node/)
  })

  it("the reason must be a catalog reason code or ManualRepairRequested, with an action", () => {
    const c = config()
    expect(requestRefusal(c, request({ reason: "Straggler" }), IN_FORCE)).toMatch(/no reason code/)
    expect(requestRefusal(c, request({ reason: "NvidiaNodeRebootRequired" }), IN_FORCE)).toBeUndefined()
    // An Event-severity code the catalog repairs by no action: reported only, never a repair.
    expect(requestRefusal(c, request({ reason: "SoftLockup" }), IN_FORCE)).toMatch(/no action/)
  })
})

describe("the request's match: due at once, the reason's action and knobs", () => {
  it("manual: Replace, capacity first; a catalog reason: its default; reasons.<reason> overrides", () => {
    const c = config({ reasons: { NvidiaGPUResetRequired: { action: "Replace", drainDeadlineSeconds: 60 } } })
    const manual = requestedMatch(c, request())
    expect(manual).toMatchObject({
      conditionType: "RepairRequested",
      reason: "ManualRepairRequested",
      action: "Replace",
      capacityFirst: true,
      expiresAt: T0,
      requestedBy: { username: "alice@example.com", request: "nodemend-system/straggler-1" }
    })
    expect(requestedMatch(c, request({ reason: "NvidiaNodeRebootRequired" })).action).toBe("Reboot")
    const o = requestedMatch(c, request({ reason: "NvidiaGPUResetRequired" }))
    expect([o.action, o.drainDeadlineMs, o.actionSource]).toEqual(["Replace", 60_000, "reason-override"])
  })
})

describe("through decide's gates", () => {
  const gpuDown = (name: string) =>
    node(name, [cond("AcceleratedHardwareReady", "False", T0 - 60 * MIN)], { pool: "p" })
  const healthy = (name: string) => node(name, [], { pool: "p" })
  const slow = healthy("slow")
  const statsOf = (
    c: ControllerConfig,
    all: ReadonlyArray<NodeView>,
    repairing: ReadonlyArray<string> = []
  ) => {
    const counter = makePoolCounter(c)
    for (const n of all) counter.upsert(n)
    for (const n of repairing) counter.setRepair(n, { pool: "p", zone: undefined, failed: false })
    return counter.stats()
  }
  const fleet = [slow, ...["a", "b", "c", "d"].map(healthy)]
  const decideWith = (c: ControllerConfig, over: Partial<Parameters<typeof decideNow>[0]> = {}) =>
    TestClock.setTime(T0 + 1000).pipe(
      Effect.andThen(
        decideNow({
          config: c,
          node: slow,
          stats: statsOf(c, fleet),
          shifts: { _tag: "Known", shifts: [] },
          requested: requestedMatch(c, request()),
          ...over
        })
      )
    )

  it.effect("a healthy node a proven request names is repaired at once; its record keeps who asked", () =>
    Effect.gen(function* () {
      const c = config({ maxUnhealthyPercent: 50 })
      const d = yield* decideWith(c)
      expect(d._tag).toBe("Repair")
      if (d._tag !== "Repair") return
      const record = newRepairRecord(
        {
          id: "r1",
          match: d.governing,
          node: { name: "slow", uid: "u", providerID: "kwok://slow", labels: {}, instance: {} as never }
        },
        T0 + 1000
      )
      expect([record.conditionType, record.reason, record.requestedBy]).toEqual([
        "RepairRequested",
        "ManualRepairRequested",
        { username: "alice@example.com", request: "nodemend-system/straggler-1" }
      ])
      // Without the request the same node is healthy: the request is the only reason to repair it.
      expect((yield* decideWith(c, { requested: undefined }))._tag).toBe("Healthy")
    })
  )

  it.effect("an open breaker holds it, and its status says what lifts it", () =>
    Effect.gen(function* () {
      const c = config({ maxUnhealthyPercent: 20 })
      const sick = [slow, gpuDown("a"), gpuDown("b"), healthy("c"), healthy("d")]
      const d = yield* decideWith(c, { stats: statsOf(c, sick) })
      expect(d._tag).toBe("Blocked")
      if (d._tag === "Repair") return
      const s = requestStatusOf(d)
      expect(s).toMatchObject({ phase: "Held", reason: "Blocked" })
      expect(s.message).toMatch(
        /breaker of pool p is open: 2 of 5 nodes are unhealthy.*lifts when at most 1 are/
      )
    })
  )

  it.effect(
    "a relapse hold of its pool and reason and a zonal shift hold it, each saying what lifts it",
    () =>
      Effect.gen(function* () {
        const c = config({ maxUnhealthyPercent: 100 })
        const relapse = (n: number) => ({
          node: `r${n}`,
          uid: `u${n}`,
          repairId: `rep${n}`,
          repairedNode: `o${n}`,
          kind: "replacement",
          at: T0 - (10 - n) * MIN,
          afterMs: 60_000
        })
        const relapses = [relapse(0), relapse(1), relapse(2)]
        const ledger = Result.getOrThrow(
          parseLedger(
            JSON.stringify({
              v: 1,
              pool: "p",
              reason: "ManualRepairRequested",
              conditionType: "RepairRequested",
              repairs: [],
              relapses,
              hold: { since: T0 - 5 * MIN, evidence: relapses, threshold: 3, windowMs: 3_600_000 }
            })
          )
        )
        const held = yield* decideWith(c, {
          ledger: (scope, reason) =>
            scope === "p" && reason === "ManualRepairRequested" ? ledger : undefined
        })
        expect(held._tag).toBe("Held")
        if (held._tag !== "Repair")
          expect(requestStatusOf(held).message).toMatch(
            /or now with kubectl nodemend release p ManualRepairRequested/
          )
        const shifted = yield* decideWith(c, {
          shifts: {
            _tag: "Known",
            shifts: [{ kind: "zonal-shift", zone: "a", expiresAt: new Date(T0 + 60 * MIN) }]
          }
        })
        expect(shifted._tag).toBe("StandDown")
        if (shifted._tag !== "Repair")
          expect(requestStatusOf(shifted).message).toMatch(
            /lifts when it ends \(expires 2026-12-07T01:00:00.000Z\)/
          )
      })
  )

  it.effect("a spent in-flight budget queues it; a veto and dry-run hold it, each saying what lifts it", () =>
    Effect.gen(function* () {
      const c = config({ maxUnhealthyPercent: 100, maxInFlight: "1" })
      const queued = yield* decideWith(c, { stats: statsOf(c, fleet, ["a"]) })
      expect(queued._tag).toBe("Queued")
      if (queued._tag !== "Repair")
        expect(requestStatusOf(queued).message).toMatch(/lifts when a repair there ends/)
      const vetoedNode = node("slow", [], { pool: "p", annotations: { "nodemend.io/do-not-repair": "true" } })
      const vetoed = yield* decideWith(c, { node: vetoedNode })
      expect(vetoed._tag).toBe("Vetoed")
      if (vetoed._tag !== "Repair")
        expect(requestStatusOf(vetoed).message).toMatch(/lifts when the annotation is removed/)
      const dry = yield* decideWith(config({ dryRun: true, maxUnhealthyPercent: 100 }))
      expect(dry._tag).toBe("WouldRepair")
      if (dry._tag !== "Repair")
        expect(requestStatusOf(dry)).toMatchObject({ phase: "Held", reason: "DryRun" })
    })
  )
})
