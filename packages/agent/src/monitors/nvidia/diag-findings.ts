/**
 * DCGM active diagnostics (dcgmRunDiagnostic, only when diagLevel > 0) -> findings. As NMA does, a software
 * test result of FAIL raises `DCGMDiagnosticFailure` (recovery `reboot`: no Resolution is emitted). Results of
 * the other tests (memory, pcie, stress ...) are returned for logging only: NMA ships only the cudaless
 * software plugin, and the catalog has no reason for them. Pure.
 */
import { DCGM_SOFTWARE_INDEX, type DiagEntityResult, type DiagReport } from "@nodemend/dcgm-native"
import type { Finding } from "../../model.ts"
import { nvidiaDetection } from "./findings.ts"
import type { SubjectOf } from "./polled-findings.ts"

export const diagFailureMessage = (r: DiagEntityResult): string =>
  `DCGM Diagnostic failed for test ${r.testName} with error: ${r.errorMessage ?? `no error reported (code ${r.errorCode ?? "none"})`}`

export const diagnosticFindings = (
  report: DiagReport,
  atMs: number,
  subjectOf: SubjectOf
): { readonly findings: readonly Finding[]; readonly otherFailures: readonly DiagEntityResult[] } => {
  const findings: Finding[] = []
  const otherFailures: DiagEntityResult[] = []
  for (const r of report.results) {
    if (r.result !== "Fail") continue
    if (r.testId !== DCGM_SOFTWARE_INDEX) {
      otherFailures.push(r)
      continue
    }
    findings.push(
      nvidiaDetection(
        "DCGMDiagnosticFailure",
        diagFailureMessage(r),
        atMs,
        subjectOf(r.entityGroupId, r.entityId)
      )
    )
  }
  return { findings, otherFailures }
}
