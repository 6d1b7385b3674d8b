/**
 * The repair state machine's LogCaptureHook backed by captureLogsBeforeTermination: program.ts swaps
 * `noLogCaptureLayer` for `logCaptureHookLayer({ destination })`. The hook answers the state machine's outcome
 * with the bundle's reported digest (and, for an S3 destination, the object it went to) and logs the details; it
 * inherits the capture's guarantee (never fails, returns within `req.timeoutMs`, presigning included).
 * It goes through the controller's own connection (the Kube service's).
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { Kube } from "../kube/Kube.ts"
import { LogCaptureHook, type LogCaptureReport, type LogCaptureRequest } from "../repair/LogCaptureHook.ts"
import { captureLogsBeforeTermination, type LogCaptureCategory } from "./LogCapture.ts"
import {
  type BundlePutPresigner,
  bundleObjectKey,
  parseS3Destination,
  s3ObjectUri
} from "./S3BundleDestination.ts"

export interface LogCaptureHookOptions {
  /**
   * `s3://bucket/prefix` (with `presigner`: one presigned PUT per repair), `node`, or a URL template accepted by
   * the agents' allowlist; `{node}` and `{repairId}` are filled in. A function can mint a URL per repair.
   */
  readonly destination: string | ((req: LogCaptureRequest) => string)
  readonly categories?: ReadonlyArray<LogCaptureCategory>
  /** Signs the PUT of an `s3://` destination with the controller's credentials (S3BundleDestination.ts). */
  readonly presigner?: BundlePutPresigner
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

/** Where this repair's bundle goes: the URL the agent PUTs to and, for S3, the object it names. */
export const resolveDestination = (
  options: LogCaptureHookOptions,
  req: LogCaptureRequest
): Effect.Effect<{ readonly url: string; readonly object?: string }, Error> => {
  const s3 = typeof options.destination === "string" ? parseS3Destination(options.destination) : undefined
  if (s3 === undefined) return Effect.sync(() => ({ url: destinationFor(options.destination, req) }))
  const presigner = options.presigner
  if (presigner === undefined)
    return Effect.fail(new Error(`no S3 presigner for ${String(options.destination)}`))
  return Effect.gen(function* () {
    const key = bundleObjectKey(s3, req.nodeName, req.repairId, yield* Clock.currentTimeMillis)
    // Valid no longer than the capture may run: the URL is readable by every agent in the NodeDiagnostic.
    const url = yield* Effect.tryPromise({
      try: () => presigner.presignPut(s3.bucket, key, req.timeoutMs / 1000),
      catch: (e) => new Error(`could not presign the S3 PUT: ${e instanceof Error ? e.message : String(e)}`)
    })
    return { url, object: s3ObjectUri(s3.bucket, key) }
  })
}

const capture = (kube: Kube["Service"], options: LogCaptureHookOptions, req: LogCaptureRequest) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const destination = yield* resolveDestination(options, req)
    const leftMs = Math.max(0, req.timeoutMs - ((yield* Clock.currentTimeMillis) - started))
    const r = yield* captureLogsBeforeTermination(kube.http, req.nodeName, {
      timeout: Duration.millis(leftMs),
      destination: destination.url,
      ...(options.categories ? { categories: options.categories } : {})
    })
    yield* Effect.logInfo("pre-termination log capture", {
      node: req.nodeName,
      repairId: req.repairId,
      outcome: r.outcome,
      elapsedMs: r.elapsedMs,
      message: r.message,
      ...(destination.object ? { object: destination.object } : {})
    })
    return {
      outcome: r.outcome,
      ...(r.outcome === "captured" && r.bundle ? { bundle: r.bundle } : {}),
      // Named only when the agent reported it delivered: otherwise there may be nothing there.
      ...(r.outcome === "captured" && destination.object ? { object: destination.object } : {})
    } satisfies LogCaptureReport
  }).pipe(
    Effect.catch((e) =>
      Effect.logWarning("pre-termination log capture not requested", {
        node: req.nodeName,
        repairId: req.repairId,
        error: e.message
      }).pipe(Effect.as<LogCaptureReport>({ outcome: "failed" }))
    )
  )

export const logCaptureHookLayer = (
  options: LogCaptureHookOptions
): Layer.Layer<LogCaptureHook, never, Kube> =>
  Layer.effect(
    LogCaptureHook,
    Effect.gen(function* () {
      const kube = yield* Kube
      return LogCaptureHook.of({ capture: (req) => capture(kube, options, req) })
    })
  )
