import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseNodeCondition } from "@nodemend/reason-codes"

describe("parseNodeCondition", () => {
  it("recognises a fault of ours", () => {
    const parsed = parseNodeCondition({
      type: "AcceleratedHardwareReady",
      status: "False",
      reason: "NvidiaXID79Error"
    })
    expect(parsed.kind).toBe("fault")
    if (parsed.kind === "fault") {
      expect(parsed.resolved.defaultAction).toBe("Reboot")
      expect(parsed.resolved.entry.severity).toBe("Condition")
    }
  })

  it("recognises ready conditions, including Neuron's ready reason", () => {
    expect(parseNodeCondition({ type: "KernelReady", status: "True", reason: "KernelIsReady" })).toEqual({
      kind: "ready",
      conditionType: "KernelReady"
    })
    expect(
      parseNodeCondition({
        type: "AcceleratedHardwareReady",
        status: "True",
        reason: "NeuronAcceleratedHardwareIsReady"
      }).kind
    ).toBe("ready")
  })

  it("gives a clear unknown-reason result", () => {
    expect(parseNodeCondition({ type: "KernelReady", status: "False", reason: "SomethingNew" })).toEqual({
      kind: "unknown-reason",
      conditionType: "KernelReady",
      reason: "SomethingNew",
      detail: 'unknown reason "SomethingNew"'
    })
    const wrongType = parseNodeCondition({
      type: "StorageReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs"
    })
    expect(wrongType.kind === "unknown-reason" && wrongType.detail).toBe(
      'reason "ForkFailedOutOfPIDs" belongs to KernelReady, not StorageReady'
    )
  })

  it("leaves kubelet's conditions alone and rejects garbage", () => {
    expect(parseNodeCondition({ type: "Ready", status: "True", reason: "KubeletReady" })).toEqual({
      kind: "not-ours",
      type: "Ready"
    })
    expect(parseNodeCondition({ type: "DiskPressure", status: "True" }).kind).toBe("not-ours")
    expect(parseNodeCondition(null).kind).toBe("invalid")
    expect(parseNodeCondition({ type: "KernelReady", status: "maybe" }).kind).toBe("invalid")
  })

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const kind = parseNodeCondition(value).kind
        expect(["ready", "fault", "unknown-reason", "not-ours", "invalid"]).toContain(kind)
      })
    )
    fc.assert(
      fc.property(
        fc.record({
          type: fc.constantFrom("KernelReady", "NetworkingReady"),
          status: fc.constantFrom("True", "False"),
          reason: fc.string()
        }),
        (c) => {
          expect(["ready", "fault", "unknown-reason"]).toContain(parseNodeCondition(c).kind)
        }
      )
    )
  })
})
