import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { parseConfigText } from "../../src/config/load.ts"
import { detectAccelerator, managedConditionTypes, readyTextsFor } from "../../src/k8s/managed-conditions.ts"

const cfg = (text: string) => {
  const r = parseConfigText(text)
  if (Result.isFailure(r)) throw r.failure
  return r.success
}

describe("managed condition types", () => {
  it("one per enabled monitor; AcceleratedHardwareReady only with a running GPU monitor", () => {
    expect([...managedConditionTypes(cfg(""), undefined)]).toEqual([
      "KernelReady",
      "ContainerRuntimeReady",
      "NetworkingReady",
      "StorageReady"
    ])
    expect([...managedConditionTypes(cfg(""), "nvidia")]).toContain("AcceleratedHardwareReady")
    expect([
      ...managedConditionTypes(cfg("monitors: { nvidia: { enabled: false } }"), "nvidia")
    ]).not.toContain("AcceleratedHardwareReady")
    expect([
      ...managedConditionTypes(cfg("monitors: { networking: { enabled: false } }"), undefined)
    ]).not.toContain("NetworkingReady")
  })
  it("detects the accelerator from the bound driver names", () => {
    expect(detectAccelerator("0000\t10de20b0\t0\tnvidia\n")).toBe("nvidia")
    expect(detectAccelerator("0000\t1d0f7064\t0\tneuron\n")).toBe("neuron")
    expect(detectAccelerator(undefined)).toBe("none")
    expect(readyTextsFor("neuron").get("AcceleratedHardwareReady")?.reason).toBe(
      "NeuronAcceleratedHardwareIsReady"
    )
  })
})
