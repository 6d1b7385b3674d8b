// DCGM health check incidents -> findings (pure). Codes: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_errors.h.
import type { HealthIncident, HealthReport } from "@nodemend/dcgm-native"
import { describe, expect, it } from "vitest"
import { healthCheckFindings } from "../../src/monitors/nvidia/health-findings.ts"
import { defaultSubject } from "../../src/monitors/nvidia/polled-findings.ts"

const incident = (over: Partial<HealthIncident>): HealthIncident => ({
  system: 0x10,
  health: "Fail",
  code: 4,
  message: "Detected 1 volatile double-bit ECC error(s) in GPU 3.",
  entityGroupId: 1,
  entityId: 3,
  ...over
})
const report = (...incidents: HealthIncident[]): HealthReport => ({
  overallHealth: incidents.some((i) => i.health === "Fail") ? "Fail" : incidents.length > 0 ? "Warn" : "Pass",
  incidents
})

describe("DCGM health check findings", () => {
  it("FAIL is the DCGMHealthCode{code} condition, WARN the same reason as an Event", () => {
    const r = healthCheckFindings(
      report(
        incident({}),
        incident({
          health: "Warn",
          code: 14,
          message: "GPU 2's NvLink link 5 is currently down",
          entityId: 2
        })
      ),
      [],
      1000,
      defaultSubject
    )
    expect(r.findings).toEqual([
      expect.objectContaining({
        _tag: "Detection",
        reason: "DCGMHealthCode4",
        severity: "Condition",
        conditionType: "AcceleratedHardwareReady",
        message:
          "DCGM detected issues in health check system with error code 4: Detected 1 volatile double-bit ECC error(s) in GPU 3.",
        subject: "gpu3",
        observedAtMs: 1000
      }),
      expect.objectContaining({
        _tag: "Detection",
        reason: "DCGMHealthCode14",
        severity: "Event",
        subject: "gpu2"
      })
    ])
    expect(r.failing).toEqual([{ code: 4, subject: "gpu3" }])
  })

  it("skips code 122 (IMEX unhealthy) whatever its verdict", () => {
    const r = healthCheckFindings(
      report(incident({ code: 122, message: "IMEX daemon status is UNAVAILABLE (not running)" })),
      [],
      0,
      defaultSubject
    )
    expect(r).toEqual({ findings: [], failing: [] })
  })

  it("a FAIL no longer reported resolves; one still reported stays raised", () => {
    const first = healthCheckFindings(report(incident({}), incident({ entityId: 5 })), [], 0, defaultSubject)
    expect(first.failing).toHaveLength(2)
    const second = healthCheckFindings(
      report(incident({ entityId: 5 })),
      first.failing,
      300_000,
      defaultSubject
    )
    expect(second.findings).toEqual([
      expect.objectContaining({ _tag: "Detection", reason: "DCGMHealthCode4", subject: "gpu5" }),
      expect.objectContaining({ _tag: "Resolution", reason: "DCGMHealthCode4", subject: "gpu3" })
    ])
    expect(second.failing).toEqual([{ code: 4, subject: "gpu5" }])
  })

  it("names switches and GPUs through subjectOf, and reports one incident per code and entity", () => {
    const r = healthCheckFindings(
      report(
        incident({ entityGroupId: 3, entityId: 1, code: 109, system: 0x800 }),
        incident({ entityGroupId: 3, entityId: 1, code: 109, system: 0x800 })
      ),
      [],
      0,
      defaultSubject
    )
    expect(r.findings.map((f) => [f.reason, f.subject])).toEqual([["DCGMHealthCode109", "nvswitch1"]])
  })
})
