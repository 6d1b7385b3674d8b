/**
 * The pre-termination log-capture step. The diagnostics package (`src/diagnostics/LogCapture.ts`, another
 * engineer) creates a NodeDiagnostic and waits for it up to a bound; until it is wired in program.ts this
 * hook is a no-op that answers `skipped`. The state machine calls it between drain and terminate when the
 * policy says `captureLogs: true` (the default for AcceleratedHardwareReady).
 */
import { Context, Effect, Layer } from "effect"

export type LogCaptureOutcome = "captured" | "timed-out" | "skipped" | "failed"

/** The outcome, and for a captured bundle its SHA-256 and size as the node's agent reported them. */
export interface LogCaptureReport {
  readonly outcome: LogCaptureOutcome
  readonly bundle?: { readonly sha256: string; readonly size: number }
  /** Where the bundle went, when the destination names an object (`s3://bucket/key`). */
  readonly object?: string
}

export interface LogCaptureRequest {
  readonly nodeName: string
  readonly repairId: string
  readonly conditionType: string
  readonly reason: string
  readonly timeoutMs: number
}

export class LogCaptureHook extends Context.Service<
  LogCaptureHook,
  { readonly capture: (req: LogCaptureRequest) => Effect.Effect<LogCaptureReport> }
>()("nodemend/LogCaptureHook") {}

export const noLogCaptureLayer: Layer.Layer<LogCaptureHook> = Layer.succeed(
  LogCaptureHook,
  LogCaptureHook.of({ capture: () => Effect.succeed({ outcome: "skipped" }) })
)
