// A pool's DCGM diagnostic before a replacement counts as capacity (ADR 0019): the config that asks for it, what a
// repair fixes of it in its record, and the gate's step on the replacement's NodeDiagnostic as read (pure).
import type { Node } from "@nodemend/kube-access"
import type { NodeDiagnostic } from "@nodemend/kube-access/NodeDiagnostic"
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { gateReplacement } from "../src/actions/replacementGate.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { dcgmDiagnosticStep, REPAIR_ID_LABEL } from "../src/decide/dcgmDiagnosticGate.ts"
import { healthExpectations } from "../src/decide/replacementHealth.ts"
import { fact } from "../src/repair/outcome.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"
import { xid79Match } from "./fixtures.ts"

const errorOf = (raw: unknown) => {
  const r = decodeConfig(raw)
  return Result.isFailure(r) ? r.failure.message : "decoded"
}

describe("pools.<p>.replacementDiagnostic", () => {
  it("is opt-in per pool; its timeout defaults to 300 s", () => {
    const c = Result.getOrThrow(
      decodeConfig({
        pools: {
          "gpu-h100": { replacementDiagnostic: { dcgmLevel: 1 } },
          slow: { replacementDiagnostic: { dcgmLevel: 2, timeoutSeconds: 450 } },
          cpu: { maxUnhealthyPercent: 10 }
        }
      })
    )
    expect(c.pools["gpu-h100"]?.replacementDiagnostic).toEqual({ dcgmLevel: 1, timeoutSeconds: 300 })
    expect(c.pools.slow?.replacementDiagnostic).toEqual({ dcgmLevel: 2, timeoutSeconds: 450 })
    expect(c.pools.cpu).toEqual({ maxUnhealthyPercent: 10 })
  })

  it("refuses a level DCGM has not, a missing level, an unknown key, naming the field", () => {
    expect(errorOf({ pools: { gpu: { replacementDiagnostic: { dcgmLevel: 5 } } } })).toContain(
      "pools.gpu.replacementDiagnostic.dcgmLevel: Expected 1 | 2 | 3 | 4"
    )
    expect(errorOf({ pools: { gpu: { replacementDiagnostic: { timeoutSeconds: 60 } } } })).toContain(
      "pools.gpu.replacementDiagnostic.dcgmLevel: Missing key"
    )
    expect(errorOf({ pools: { gpu: { replacementDiagnostic: { level: 1 } } } })).toContain(
      "pools.gpu.replacementDiagnostic.level: unknown key"
    )
  })

  it("refuses a timeout the gate's own bound would cut short", () => {
    expect(
      errorOf({
        replacement: { healthTimeoutSeconds: 600 },
        pools: { "gpu.h100": { replacementDiagnostic: { dcgmLevel: 3, timeoutSeconds: 600 } } }
      })
    ).toContain(
      'pools["gpu.h100"].replacementDiagnostic.timeoutSeconds: must be less than replacement.healthTimeoutSeconds (600), the bound of the whole health gate'
    )
    expect(
      errorOf({
        replacement: { healthTimeoutSeconds: 120 },
        pools: { gpu: { replacementDiagnostic: { dcgmLevel: 1 } } }
      })
    ).toContain("pools.gpu.replacementDiagnostic.timeoutSeconds: must be less than")
  })

  it("a repair fixes its proven pool's diagnostic in what it expects of the replacement; other pools none", () => {
    const c = Result.getOrThrow(
      decodeConfig({ pools: { gpu: { replacementDiagnostic: { dcgmLevel: 1, timeoutSeconds: 90 } } } })
    )
    const old = { conditionTypes: ["AcceleratedHardwareReady"], capacity: { "nvidia.com/gpu": "8" } }
    expect(healthExpectations(c, old, {}, "gpu")).toEqual({
      agentConditions: ["AcceleratedHardwareReady"],
      gpus: 8,
      dcgmDiagnostic: { level: 1, timeoutSeconds: 90 }
    })
    expect(healthExpectations(c, old, {}, "other").dcgmDiagnostic).toBeUndefined()
    expect(healthExpectations(c, old, {}).dcgmDiagnostic).toBeUndefined()
  })
})

const T0 = Date.parse("2026-12-06T12:00:00Z")
const ASK = { level: 1, timeoutSeconds: 60 } as const

const object = (
  over: {
    readonly repairId?: string
    readonly level?: 1 | 2
    readonly generation?: number
    readonly running?: boolean
    readonly completed?: object
  } = {}
): NodeDiagnostic =>
  ({
    metadata: {
      name: "gpu-r",
      generation: over.generation ?? 1,
      creationTimestamp: new Date(T0).toISOString(),
      labels: { [REPAIR_ID_LABEL]: over.repairId ?? "r1" }
    },
    spec: { dcgmDiagnostic: { level: over.level ?? 1 } },
    status: {
      dcgmDiagnostic: {
        ...(over.running ? { running: { startedAt: new Date(T0).toISOString() } } : {}),
        ...(over.completed ? { completed: over.completed } : {})
      }
    }
  }) as NodeDiagnostic

const completed = (result: string, message: string, observedGeneration = 1) => ({
  result,
  message,
  level: 1,
  startedAt: "t",
  finishedAt: "t",
  observedGeneration
})

describe("the gate's DCGM diagnostic step", () => {
  it("asks when there is no request of this repair at this level (none, another repair's, another level)", () => {
    expect(dcgmDiagnosticStep(undefined, ASK, "r1", T0)).toEqual({ _tag: "Request" })
    expect(dcgmDiagnosticStep(object({ repairId: "r0" }), ASK, "r1", T0)).toEqual({ _tag: "Request" })
    expect(dcgmDiagnosticStep(object({ level: 2 }), ASK, "r1", T0)).toEqual({ _tag: "Request" })
    const logCapture = {
      metadata: { name: "gpu-r", labels: { [REPAIR_ID_LABEL]: "r1" } },
      spec: { logCapture: { destination: "node" } }
    } as NodeDiagnostic
    expect(dcgmDiagnosticStep(logCapture, ASK, "r1", T0)).toEqual({ _tag: "Request" })
  })

  it("Pass is capacity; Fail names DCGM's words and the level; NotAvailable fails closed", () => {
    expect(dcgmDiagnosticStep(object({ completed: completed("Pass", "ok") }), ASK, "r1", T0)).toEqual({
      _tag: "Passed"
    })
    expect(
      dcgmDiagnosticStep(
        object({ completed: completed("Fail", "software test failed on GPU 0: A pending retired page") }),
        ASK,
        "r1",
        T0
      )
    ).toEqual({
      _tag: "Failed",
      why: "software test failed on GPU 0: A pending retired page (DCGM diagnostic level 1)"
    })
    expect(
      dcgmDiagnosticStep(object({ completed: completed("NotAvailable", "no DCGM") }), ASK, "r1", T0)
    ).toEqual({ _tag: "Failed", why: "not available on the node: no DCGM (DCGM diagnostic level 1)" })
  })

  it("a result for an older generation is no answer; waiting is bounded by the pool's timeout from creation", () => {
    const stale = object({ generation: 2, completed: completed("Pass", "ok", 1) })
    expect(dcgmDiagnosticStep(stale, ASK, "r1", T0 + 10_000)).toEqual({
      _tag: "Waiting",
      why: "asked its agent for DCGM diagnostic level 1"
    })
    expect(dcgmDiagnosticStep(object({ running: true }), ASK, "r1", T0 + 59_999)).toEqual({
      _tag: "Waiting",
      why: "its agent is running DCGM diagnostic level 1"
    })
    expect(dcgmDiagnosticStep(object({ running: true }), ASK, "r1", T0 + 60_000)).toEqual({
      _tag: "Failed",
      why: "no result from the node's agent within 60s (DCGM diagnostic level 1)"
    })
  })

  it("keeps the agent's words short", () => {
    const long = "x".repeat(2000)
    const step = dcgmDiagnosticStep(object({ completed: completed("Fail", long) }), ASK, "r1", T0)
    expect(step._tag === "Failed" && step.why.length).toBeLessThan(450)
  })
})

const GPU_REPLACEMENT: Node = {
  metadata: { name: "gpu-r" },
  status: {
    conditions: [
      { type: "Ready", status: "True" },
      { type: "AcceleratedHardwareReady", status: "True" }
    ],
    capacity: { "nvidia.com/gpu": "8" },
    allocatable: { "nvidia.com/gpu": "8" }
  }
}

const gateOn = (node: Node) => {
  const config = Result.getOrThrow(decodeConfig({}))
  const r = {
    ...newRepairRecord(
      {
        id: "r1",
        match: xid79Match(T0, { capacityFirst: true }),
        node: {
          name: "gpu",
          uid: "u1",
          providerID: "kwok://gpu",
          labels: {},
          instance: { instanceId: "gpu", state: "running", launch: {}, owner: { kind: "standalone" } }
        },
        replacementExpects: {
          agentConditions: ["AcceleratedHardwareReady"],
          gpus: 8,
          dcgmDiagnostic: { level: 1, timeoutSeconds: 60 }
        }
      },
      T0
    )
  }
  const none = () => Effect.void
  const ports = {
    cache: { get: (n: string) => (n === "gpu-r" ? node : undefined), names: () => ["gpu-r"] },
    events: { emit: none, emitNow: none, emitDeduped: none },
    config,
    cloud: {}
  }
  return Effect.runPromise(
    gateReplacement(ports, r, fact({ _tag: "ReplacementReady", nodeName: "gpu-r" }), undefined)
  )
}

describe("the gate with a pool's DCGM diagnostic", () => {
  it("is asked only of a replacement healthy by every other check; with no way to ask, it fails closed", async () => {
    const faulty: Node = {
      ...GPU_REPLACEMENT,
      status: {
        ...GPU_REPLACEMENT.status,
        conditions: [
          { type: "Ready", status: "True" },
          { type: "AcceleratedHardwareReady", status: "False" }
        ]
      }
    }
    expect(await gateOn(faulty)).toMatchObject({ fact: { check: "AgentCondition" } })
    expect(await gateOn(GPU_REPLACEMENT)).toEqual(
      fact({
        _tag: "ReplacementUnhealthy",
        nodeName: "gpu-r",
        check: "DcgmDiagnostic",
        why: "the controller has no API connection to ask it",
        attemptsAllowed: 2
      })
    )
  })
})
