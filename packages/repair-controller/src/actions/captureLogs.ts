/** Pre-termination log capture: bounded by its timeout, and never a reason to keep a broken node. */
import { Effect } from "effect"
import type { LogCaptureHook, LogCaptureReport } from "../repair/LogCaptureHook.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import { nodeEvent } from "../kube/stepPorts.ts"
import { fact } from "../repair/outcome.ts"

export interface CapturePorts {
  readonly logCapture: LogCaptureHook["Service"]
  readonly events: EventRecorder
}

/**
 * The LogCapture Event's note. A captured bundle's SHA-256 and size, as the node's agent reported them, go with
 * it: the bundle outlives the node, and anyone who could read its upload URL could have replaced it, so an
 * operator checks it against this later (`sha256sum`). Pure.
 */
export const logCaptureNote = (report: LogCaptureReport): string =>
  `pre-termination log capture: ${report.outcome}${report.object ? ` to ${report.object}` : ""}${
    report.bundle
      ? ` (bundle sha256 ${report.bundle.sha256}, ${report.bundle.size} bytes)`
      : report.outcome === "captured"
        ? " (the node's agent reported no bundle digest)"
        : ""
  }`

export const captureLogs = (env: CapturePorts, r: RepairRecord, timeoutMs: number) =>
  Effect.gen(function* () {
    const report = yield* env.logCapture
      .capture({
        nodeName: r.node.name,
        repairId: r.id,
        conditionType: r.conditionType,
        reason: r.reason,
        timeoutMs
      })
      .pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => Effect.succeed<LogCaptureReport>({ outcome: "timed-out" })
        })
      )
    yield* nodeEvent(env.events, r, "Normal", "LogCapture", logCaptureNote(report))
    return fact({
      _tag: "LogCaptureFinished",
      outcome: report.outcome,
      ...(report.object ? { object: report.object } : {})
    })
  })
