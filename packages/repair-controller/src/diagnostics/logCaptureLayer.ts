/**
 * The LogCaptureHook a config asks for, as program.ts composes it: none (`skipped`) without a destination; the
 * NodeDiagnostic request with it; for `s3://bucket/prefix`, each repair's PUT presigned with the controller's
 * credentials. The capture code and the S3 client are imported only when a destination is set.
 */
import { Data, Effect, Layer } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { Kube } from "../kube/Kube.ts"
import { type LogCaptureHook, noLogCaptureLayer } from "../repair/LogCaptureHook.ts"
import { s3Settings } from "./logCaptureConfig.ts"

export class LogCaptureConfigError extends Data.TaggedError("LogCaptureConfigError")<{
  readonly message: string
}> {}

export const logCaptureLayer = (
  config: ControllerConfig,
  env: Readonly<Record<string, string | undefined>> = process.env
): Layer.Layer<LogCaptureHook, LogCaptureConfigError, Kube> => {
  const destination = config.logCapture.destination
  if (destination === undefined) return noLogCaptureLayer
  const categories = config.logCapture.categories
  const withCategories = categories !== undefined ? { categories } : {}
  return Layer.unwrap(
    Effect.gen(function* () {
      const { logCaptureHookLayer } = yield* Effect.promise(() => import("./logCaptureHookLayer.ts"))
      if (!destination.startsWith("s3://")) return logCaptureHookLayer({ destination, ...withCategories })
      const { makeBundlePutPresigner, parseS3Destination } = yield* Effect.promise(
        () => import("./S3BundleDestination.ts")
      )
      const fail = (message: string) =>
        new LogCaptureConfigError({ message: `logCapture.destination: ${message}` })
      if (parseS3Destination(destination) === undefined)
        return yield* fail(`${destination} is not s3://<bucket>[/<prefix>]`)
      const { region, endpoint } = s3Settings(config, env)
      if (region === undefined) return yield* fail(`${destination} needs a region: aws.region or AWS_REGION`)
      const presigner = yield* Effect.acquireRelease(
        Effect.sync(() => makeBundlePutPresigner({ region, ...(endpoint ? { endpoint } : {}) })),
        (p) => Effect.sync(p.close)
      )
      return logCaptureHookLayer({ destination, presigner, ...withCategories })
    })
  )
}
