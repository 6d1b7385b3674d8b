import { EntityGroup, FieldId, type FieldReading } from "@nodemend/dcgm-native"
import { describe, expect, it } from "vitest"
import { clockEventFailures, clockEventReasonNames } from "../../src/monitors/nvidia/clock-event-reasons.ts"
import { classifyFabricManagerStatus } from "../../src/monitors/nvidia/fabric-manager-status.ts"
import { fmStatusFromNvml, polledFindings } from "../../src/monitors/nvidia/polled-findings.ts"

const reading = (
  fieldId: number,
  value: bigint,
  entityId = 0,
  extra: Partial<FieldReading> = {}
): FieldReading => ({
  entityGroupId: EntityGroup.GPU,
  entityId,
  fieldId,
  status: 0,
  timestampUs: 1_700_000_000_000_000,
  value: { _tag: "Int", value },
  ...extra
})

describe("Fabric Manager status", () => {
  it("0 and 3 are healthy, 2 is a warning, everything else a fault", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 99].map(classifyFabricManagerStatus)).toEqual([
      "healthy",
      "fault",
      "warning",
      "healthy",
      "fault",
      "fault",
      "fault",
      "fault",
      "fault"
    ])
  })
  it("status 4 raises FabricManagerNotRunning; 3 resolves it; 2 is a Warning event", () => {
    const fail = polledFindings({ latest: [reading(FieldId.FABRIC_MANAGER_STATUS, 4n)], window: [] }, 5)
    expect(fail).toEqual([
      expect.objectContaining({
        _tag: "Detection",
        reason: "FabricManagerNotRunning",
        severity: "Condition",
        message: "Fabric Manager status: Failure",
        subject: "gpu0"
      })
    ])
    const ok = polledFindings({ latest: [reading(FieldId.FABRIC_MANAGER_STATUS, 3n)], window: [] }, 5)
    expect(ok).toEqual([expect.objectContaining({ _tag: "Resolution", reason: "FabricManagerNotRunning" })])
    const warn = polledFindings({ latest: [reading(FieldId.FABRIC_MANAGER_STATUS, 2n)], window: [] }, 5)
    expect(warn.map((f) => [f._tag, f.reason])).toEqual([
      ["Resolution", "FabricManagerNotRunning"],
      ["Detection", "DCGMFieldError170"]
    ])
    expect(warn[1]).toMatchObject({ severity: "Event" })
  })
  it("NVML's fabric state/status map onto the DCGM status", () => {
    expect(fmStatusFromNvml(3, 0)).toBe(3)
    expect(fmStatusFromNvml(3, 3)).toBe(4)
    expect(fmStatusFromNvml(0, 0)).toBe(0)
    expect(fmStatusFromNvml(2, 0)).toBe(2)
    expect(fmStatusFromNvml(9, 0)).toBe(5)
  })
})

describe("blank values", () => {
  it("NOT_SUPPORTED sentinels and failed reads never produce findings", () => {
    const blank: FieldReading = {
      ...reading(FieldId.FABRIC_MANAGER_STATUS, 0n),
      value: { _tag: "Blank", kind: "NotSupported" }
    }
    const unwatched = reading(FieldId.FABRIC_HEALTH_MASK, 0x255n, 0, { status: -16 })
    expect(polledFindings({ latest: [blank, unwatched], window: [] }, 5)).toEqual([])
  })
})

describe("clock event reasons", () => {
  it("idle (0x1), SW power cap and sync boost are normal; 0x8/0x40/0x80 are faults", () => {
    expect(clockEventFailures(0x1n)).toEqual([])
    expect(clockEventFailures(0x1n | 0x4n | 0x10n | 0x100n)).toEqual([])
    expect(clockEventFailures(0x8n)).toEqual(["hw_slowdown"])
    expect(clockEventFailures(0x40n)).toEqual(["hw_thermal"])
    expect(clockEventFailures(0x80n)).toEqual(["hw_power_brake"])
    expect(clockEventReasonNames(0x1ffn)).toHaveLength(9)
  })
  it("one Event per GPU per window with the union of failure bits", () => {
    const window = [
      reading(FieldId.CLOCKS_EVENT_REASONS, 0x1n, 0),
      reading(FieldId.CLOCKS_EVENT_REASONS, 0x40n, 1),
      reading(FieldId.CLOCKS_EVENT_REASONS, 0x8n, 1, { timestampUs: 1_700_000_001_000_000 })
    ]
    const out = polledFindings({ latest: [], window }, 5)
    expect(out).toHaveLength(1)
    expect(out[0]).toMatchObject({
      _tag: "Detection",
      reason: "DCGMFieldError112",
      severity: "Event",
      subject: "gpu1",
      observedAtMs: 1_700_000_001_000
    })
    expect((out[0] as { message: string }).message).toContain('"hw_slowdown,hw_thermal"')
  })
})

describe("NVSwitch SXids", () => {
  it("fatal and non-fatal SXids become DCGMFieldError856/857 events on the switch", () => {
    const window = [
      reading(FieldId.SXID_FATAL_ERROR, 12028n, 2, { entityGroupId: EntityGroup.SWITCH }),
      reading(FieldId.SXID_NON_FATAL_ERROR, 11004n, 0, { entityGroupId: EntityGroup.SWITCH })
    ]
    expect(polledFindings({ latest: [], window }, 5).map((f) => [f.reason, f.subject])).toEqual([
      ["DCGMFieldError856", "nvswitch2"],
      ["DCGMFieldError857", "nvswitch0"]
    ])
  })
})
