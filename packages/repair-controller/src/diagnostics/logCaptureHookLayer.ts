/**
 * The repair state machine's LogCaptureHook backed by captureLogsBeforeTermination: main.ts swaps
 * `noLogCaptureLayer` for `logCaptureHookLayer({ destination })`. The hook answers the state machine's outcome
 * with the bundle's reported digest and logs the details; it inherits the capture's guarantee (never fails, returns within `req.timeoutMs`).
 * It goes through the controller's own connection (the Kube service's).
 */
import { Duration, Effect, Layer } from "effect"
import { Kube } from "../kube/Kube.ts"
import { LogCaptureHook, type LogCaptureRequest } from "../repair/LogCaptureHook.ts"
import { captureLogsBeforeTermination, type LogCaptureCategory } from "./LogCapture.ts"

export interface LogCaptureHookOptions {
  /**
   * `node`, or a URL template accepted by the agents' allowlist; `{node}` and `{repairId}` are filled in
   * (e.g. a presigned-PUT URL per repair from a helper, or a fixed internal S3 prefix).
   */
  readonly destination: string | ((req: LogCaptureRequest) => string)
  readonly categories?: ReadonlyArray<LogCaptureCategory>
}

export const destinationFor = (
  destination: LogCaptureHookOptions["destination"],
  req: LogCaptureRequest
): string =>
  typeof destination === "function"
    ? destination(req)
    : destination
        .replaceAll("{node}", encodeURIComponent(req.nodeName))
        .replaceAll("{repairId}", encodeURIComponent(req.repairId))

export const logCaptureHookLayer = (
  options: LogCaptureHookOptions
): Layer.Layer<LogCaptureHook, never, Kube> =>
  Layer.effect(
    LogCaptureHook,
    Effect.gen(function* () {
      const kube = yield* Kube
      return LogCaptureHook.of({
        capture: (req) =>
          captureLogsBeforeTermination(kube.http, req.nodeName, {
            timeout: Duration.millis(req.timeoutMs),
            destination: destinationFor(options.destination, req),
            ...(options.categories ? { categories: options.categories } : {})
          }).pipe(
            Effect.tap((r) =>
              Effect.logInfo("pre-termination log capture", {
                node: req.nodeName,
                repairId: req.repairId,
                outcome: r.outcome,
                elapsedMs: r.elapsedMs,
                message: r.message
              })
            ),
            Effect.map((r) => ({
              outcome: r.outcome,
              ...(r.outcome === "captured" && r.bundle ? { bundle: r.bundle } : {})
            }))
          )
      })
    })
  )
