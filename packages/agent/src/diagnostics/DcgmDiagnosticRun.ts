/**
 * A DCGM active diagnostic asked for through a NodeDiagnostic (`spec.dcgmDiagnostic.level`): run it with the
 * node's DCGM and say how it went as the `completed` state the status carries. The repair controller's
 * replacement health gate asks for it before a replacement counts as capacity (ADR 0019). Never fails: a node
 * without DCGM answers `NotAvailable`, a run DCGM refuses answers `NotAvailable` with DCGM's words.
 */
import type { DiagEntityResult, DiagReport } from "@nodemend/dcgm-native"
import type {
  DcgmDiagnosticLevel,
  DcgmDiagnosticResult,
  DcgmTestResult
} from "@nodemend/kube-access/NodeDiagnostic"
import { Effect } from "effect"

/** Runs dcgmRunDiagnostic on every GPU at `level` (the agent's main opens a DCGM session for it). */
export type DcgmDiagnosticRunner = (
  level: DcgmDiagnosticLevel
) => Effect.Effect<DiagReport, { readonly message: string }>

export interface DcgmDiagnosticOutcome {
  readonly result: DcgmDiagnosticResult
  readonly message: string
  readonly tests?: ReadonlyArray<DcgmTestResult>
}

/** The status holds at most this many per-entity results (failures first): 20 tests x 1024 entities fit DCGM's. */
export const MAX_REPORTED_TESTS = 1024

const entity = (r: DiagEntityResult) =>
  r.entityGroupId === 1 ? `GPU ${r.entityId}` : `entity ${r.entityGroupId}/${r.entityId}`

const failureText = (r: DiagEntityResult) =>
  `${r.testName} test failed on ${entity(r)}: ${r.errorMessage ?? `no error reported (code ${r.errorCode ?? "none"})`}`

const testResult = (r: DiagEntityResult): DcgmTestResult => ({
  test: r.testName,
  testId: r.testId,
  entityGroupId: r.entityGroupId,
  entityId: r.entityId,
  result: r.result,
  ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
  ...(r.errorMessage !== undefined ? { errorMessage: r.errorMessage } : {})
})

/**
 * Pass when DCGM reported results and none failed (Warn, Skip and NotRun are not failures, as `dcgmi diag` counts
 * them); Fail when any test failed, naming each, or when DCGM reported nothing at all (nothing was shown healthy).
 * Pure.
 */
export const dcgmDiagnosticOutcome = (report: DiagReport): DcgmDiagnosticOutcome => {
  const failed = report.results.filter((r) => r.result === "Fail")
  const ordered = [...failed, ...report.results.filter((r) => r.result !== "Fail")]
  const tests = ordered.slice(0, MAX_REPORTED_TESTS).map(testResult)
  if (report.results.length === 0) return { result: "Fail", message: "DCGM reported no test result", tests }
  if (failed.length > 0) return { result: "Fail", message: failed.map(failureText).join("; "), tests }
  return { result: "Pass", message: `${report.results.length} test result(s), none failed`, tests }
}

/** Runs the diagnostic (or answers NotAvailable without a runner). Never fails. */
export const runDcgmDiagnostic = (
  runner: DcgmDiagnosticRunner | undefined,
  level: DcgmDiagnosticLevel
): Effect.Effect<DcgmDiagnosticOutcome> =>
  runner === undefined
    ? Effect.succeed({
        result: "NotAvailable",
        message: "this node's agent has no DCGM (no NVIDIA GPUs, or the DCGM library did not load)"
      })
    : runner(level).pipe(
        Effect.map(dcgmDiagnosticOutcome),
        Effect.catch((e) =>
          Effect.succeed<DcgmDiagnosticOutcome>({
            result: "NotAvailable",
            message: `DCGM did not run the diagnostic: ${e.message}`
          })
        )
      )
