import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import type { Node } from "@nodemend/kube-access"
import { replacementNodeOf } from "../src/actions/replacementGate.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { slim } from "../src/controller/NodeCache.ts"
import {
  healthExpectations,
  type ReplacementNode,
  replacementHealth
} from "../src/decide/replacementHealth.ts"

const config = Result.getOrThrow(decodeConfig({}))

const gpuNode = (over: Partial<ReplacementNode> = {}): ReplacementNode => ({
  conditions: [
    { type: "Ready", status: "True" },
    { type: "AcceleratedHardwareReady", status: "True" },
    { type: "KernelReady", status: "True" }
  ],
  capacity: { cpu: "96", "nvidia.com/gpu": "8" },
  allocatable: { cpu: "95", "nvidia.com/gpu": "8" },
  ...over
})
const expects = { agentConditions: ["AcceleratedHardwareReady", "KernelReady"], gpus: 8 }
const withCondition = (type: string, status: string | undefined, reason?: string) =>
  gpuNode({
    conditions: [
      ...gpuNode().conditions.filter((c) => c.type !== type),
      ...(status === undefined ? [] : [{ type, status, ...(reason ? { reason } : {}) }])
    ]
  })

describe("replacementHealth", () => {
  it("is Healthy when Ready, every expected agent condition True and every GPU there and allocatable", () => {
    expect(replacementHealth(gpuNode(), expects)).toEqual({ _tag: "Healthy" })
  })

  it("waits while the Node is not registered or not Ready", () => {
    expect(replacementHealth(undefined, expects)._tag).toBe("Waiting")
    expect(replacementHealth(withCondition("Ready", "False"), expects)).toEqual({
      _tag: "Waiting",
      why: "Ready is False"
    })
    expect(replacementHealth(withCondition("Ready", undefined), expects)._tag).toBe("Waiting")
  })

  it("waits while an expected agent condition is absent (the agent has not reported: absent is not Unknown)", () => {
    expect(replacementHealth(withCondition("KernelReady", undefined), expects)).toEqual({
      _tag: "Waiting",
      why: "the agent has not reported KernelReady"
    })
    expect(replacementHealth(withCondition("KernelReady", "Unknown"), expects)._tag).toBe("Waiting")
  })

  it("is Unhealthy, naming the condition and its reason, when an agent condition is False", () => {
    expect(
      replacementHealth(withCondition("AcceleratedHardwareReady", "False", "NvidiaXID79Error"), expects)
    ).toEqual({
      _tag: "Unhealthy",
      check: "AgentCondition",
      why: "AcceleratedHardwareReady=False (NvidiaXID79Error)"
    })
  })

  it("ignores agent conditions the repair does not expect", () => {
    expect(replacementHealth(withCondition("StorageReady", "False"), expects)._tag).toBe("Healthy")
  })

  it("is Unhealthy when a GPU is missing from capacity, or not allocatable", () => {
    const short = gpuNode({ capacity: { "nvidia.com/gpu": "7" } })
    expect(replacementHealth(short, expects)).toEqual({
      _tag: "Unhealthy",
      check: "GpuCapacity",
      why: "nvidia.com/gpu capacity 7, expected 8"
    })
    const unusable = gpuNode({ allocatable: { "nvidia.com/gpu": "6" } })
    expect(replacementHealth(unusable, expects)).toMatchObject({ _tag: "Unhealthy", check: "GpuAllocatable" })
    expect(replacementHealth(gpuNode({ allocatable: {} }), expects)).toMatchObject({
      _tag: "Unhealthy",
      check: "GpuAllocatable"
    })
  })

  it("takes more GPUs than expected (the repaired node may have lost one before the repair started)", () => {
    const more = gpuNode({ capacity: { "nvidia.com/gpu": "8" }, allocatable: { "nvidia.com/gpu": "8" } })
    expect(replacementHealth(more, { ...expects, gpus: 7 })._tag).toBe("Healthy")
  })

  it("waits while the device plugin has not reported any GPU capacity", () => {
    expect(replacementHealth(gpuNode({ capacity: {}, allocatable: {} }), expects)).toEqual({
      _tag: "Waiting",
      why: "no nvidia.com/gpu capacity reported yet"
    })
  })

  it("checks no GPUs on a pool without them", () => {
    expect(replacementHealth(gpuNode({ capacity: {}, allocatable: {} }), { agentConditions: [] })._tag).toBe(
      "Healthy"
    )
  })
})

describe("healthExpectations", () => {
  it("expects the agent's watched condition types the old node reported, and its GPUs from the cloud's facts", () => {
    const e = healthExpectations(
      config,
      {
        conditionTypes: ["Ready", "MemoryPressure", "AcceleratedHardwareReady", "KernelReady"],
        capacity: { "nvidia.com/gpu": "4" }
      },
      { "nvidia.com/gpu": "8" }
    )
    expect(e).toEqual({ agentConditions: ["KernelReady", "AcceleratedHardwareReady"], gpus: 8 })
  })

  it("takes the old node's GPU capacity when the cloud's facts do not carry it; none on a CPU node", () => {
    expect(
      healthExpectations(config, { conditionTypes: [], capacity: { "nvidia.com/gpu": "8" } }, {})
    ).toEqual({
      agentConditions: [],
      gpus: 8
    })
    expect(
      healthExpectations(config, { conditionTypes: ["KernelReady"], capacity: { cpu: "8" } }, {})
    ).toEqual({
      agentConditions: ["KernelReady"]
    })
  })
})

describe("the informer's slimmed Node", () => {
  it("keeps the GPUs of capacity and allocatable, for the gate, and drops the rest", () => {
    const n: Node = {
      metadata: { name: "n" },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        capacity: { cpu: "96", "nvidia.com/gpu": "8" },
        allocatable: { cpu: "95", "nvidia.com/gpu": "7" },
        images: []
      }
    }
    slim(n)
    expect(n.status).toEqual({
      conditions: [{ type: "Ready", status: "True" }],
      capacity: { "nvidia.com/gpu": "8" },
      allocatable: { "nvidia.com/gpu": "7" }
    })
    expect(replacementHealth(replacementNodeOf(n), { agentConditions: [], gpus: 8 })).toMatchObject({
      check: "GpuAllocatable"
    })
  })
})
