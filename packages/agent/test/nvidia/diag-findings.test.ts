// DCGM active diagnostic results -> findings (pure). Codes/messages: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_errors.h.
import type { DiagEntityResult } from "@nodemend/dcgm-native"
import { describe, expect, it } from "vitest"
import { diagnosticFindings } from "../../src/monitors/nvidia/diag-findings.ts"
import { defaultSubject } from "../../src/monitors/nvidia/polled-findings.ts"

const result = (over: Partial<DiagEntityResult>): DiagEntityResult => ({
  entityGroupId: 1,
  entityId: 5,
  testId: 15,
  testName: "software",
  result: "Fail",
  errorCode: 6,
  errorMessage: "A pending retired page has been detected in GPU 5.",
  ...over
})

describe("DCGM diagnostic findings", () => {
  it("a software FAIL is DCGMDiagnosticFailure with NMA's message; PASS/WARN/SKIP raise nothing", () => {
    const r = diagnosticFindings(
      {
        results: [
          result({}),
          result({ entityId: 0, result: "Pass", errorCode: undefined, errorMessage: undefined }),
          result({ entityId: 1, result: "Warn" }),
          result({ entityId: 2, result: "Skip" })
        ]
      },
      42,
      defaultSubject
    )
    expect(r.findings).toEqual([
      expect.objectContaining({
        _tag: "Detection",
        reason: "DCGMDiagnosticFailure",
        severity: "Condition",
        conditionType: "AcceleratedHardwareReady",
        message:
          "DCGM Diagnostic failed for test software with error: A pending retired page has been detected in GPU 5.",
        subject: "gpu5",
        observedAtMs: 42
      })
    ])
    expect(r.otherFailures).toEqual([])
  })

  it("failures of other tests are returned for logging, not raised", () => {
    const mem = result({ testId: 0, testName: "memory", errorCode: 4, errorMessage: "x" })
    const r = diagnosticFindings({ results: [mem] }, 0, defaultSubject)
    expect(r.findings).toEqual([])
    expect(r.otherFailures).toEqual([mem])
  })

  it("a FAIL without an error entry still says which test failed", () => {
    const r = diagnosticFindings(
      { results: [result({ errorCode: undefined, errorMessage: undefined })] },
      0,
      defaultSubject
    )
    expect((r.findings[0] as { message: string }).message).toBe(
      "DCGM Diagnostic failed for test software with error: no error reported (code none)"
    )
  })
})
