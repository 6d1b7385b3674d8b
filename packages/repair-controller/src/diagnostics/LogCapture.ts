/**
 * Capture before termination: when a policy says `captureLogs: true`, the controller asks the node's agent
 * for a log bundle (a NodeDiagnostic named after the node) and waits a bounded time for the result. This
 * never fails and never blocks past the bound: the outcome is a value, and the repair proceeds whatever it is.
 *
 * The NodeDiagnostic is owned by the Node, so the garbage collector removes it with the Node.
 */
import { type KubeError, type KubeHttp, nodePath } from "@nodemend/kube-access"
import {
  type BundleDigest,
  type CompletedState,
  captureProgress,
  decodeNodeDiagnostic,
  type LogCategory,
  NODE_DIAGNOSTICS_PATH,
  NodeDiagnosticGVR,
  nodeDiagnosticBody,
  nodeDiagnosticPath
} from "@nodemend/kube-access/NodeDiagnostic"
import { Clock, Duration, Effect, Schedule } from "effect"

export { NodeDiagnosticGVR }

export type LogCaptureCategory = LogCategory

export interface LogCaptureOptions {
  /** The most the repair waits for the bundle (creating the request included). */
  readonly timeout: Duration.Input
  /** `node`, or a presigned PUT URL that the agents' destination allowlist accepts. */
  readonly destination: string
  readonly categories?: ReadonlyArray<LogCaptureCategory>
  /** How often the status is read. Default 1 second. */
  readonly pollInterval?: Duration.Input
}

/** What happened; `outcome` is the repair state machine's LogCaptureFinished outcome. */
export type LogCaptureResult =
  | {
      readonly outcome: "captured"
      readonly reason: "Success" | "SuccessWithErrors"
      readonly message: string
      /** The bundle as the node's agent reported it (only that agent writes the status); absent from an older agent. */
      readonly bundle?: BundleDigest
      readonly elapsedMs: number
    }
  | { readonly outcome: "failed"; readonly message: string; readonly elapsedMs: number }
  | { readonly outcome: "timed-out"; readonly message: string; readonly elapsedMs: number }

class CaptureRequestFailed extends Error {}

/** Creates a fresh NodeDiagnostic for the node (replacing an old one, whose status would be stale); returns its generation. */
const requestCapture = (http: KubeHttp, nodeName: string, options: LogCaptureOptions) =>
  Effect.gen(function* () {
    const node = (yield* http
      .call("read node", "GET", nodePath(nodeName))
      .pipe(
        Effect.mapError(
          (e) => new CaptureRequestFailed(e.code === 404 ? `node ${nodeName} not found` : e.message)
        )
      )) as { metadata?: { uid?: string } } | undefined
    const body = nodeDiagnosticBody(
      nodeName,
      { destination: options.destination, categories: options.categories ?? ["All"] },
      {
        labels: { "app.kubernetes.io/managed-by": "nodemend-repair-controller" },
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: node?.metadata?.uid ?? "" }]
      }
    )
    const create = http.call("create NodeDiagnostic", "POST", NODE_DIAGNOSTICS_PATH, body)
    const created = yield* create.pipe(
      Effect.catchIf(
        (e: KubeError) => e.code === 409,
        () =>
          // An earlier capture (or a user's) left one behind: its status describes another request.
          http
            .call("delete NodeDiagnostic", "DELETE", nodeDiagnosticPath(nodeName))
            .pipe(
              Effect.andThen(
                create.pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 10 }))
              )
            )
      ),
      Effect.mapError((e) => new CaptureRequestFailed(`could not create NodeDiagnostic: ${e.message}`))
    )
    const view = yield* decodeNodeDiagnostic(created).pipe(
      Effect.mapError((e) => new CaptureRequestFailed(`unexpected NodeDiagnostic: ${e.message}`))
    )
    return view.metadata.generation ?? 1
  })

const readCompleted = (http: KubeHttp, nodeName: string, generation: number) =>
  http.call("read NodeDiagnostic", "GET", nodeDiagnosticPath(nodeName)).pipe(
    Effect.flatMap(decodeNodeDiagnostic),
    Effect.map((nd): CompletedState | undefined => {
      const progress = captureProgress(nd, generation)
      return progress._tag === "Completed" ? progress.completed : undefined
    }),
    // A transient read error is just "not yet"; the overall bound still applies.
    Effect.catch(() => Effect.succeed(undefined))
  )

/**
 * Asks the node's agent for a log bundle and waits up to `options.timeout`. Always succeeds with a result.
 * `http`: the controller's connection (the Kube service's).
 */
export const captureLogsBeforeTermination = (
  http: KubeHttp,
  nodeName: string,
  options: LogCaptureOptions
): Effect.Effect<LogCaptureResult> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const elapsed = Clock.currentTimeMillis.pipe(Effect.map((now) => now - started))
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const run = Effect.gen(function* () {
      const generation = yield* requestCapture(http, nodeName, options)
      const completed = yield* readCompleted(http, nodeName, generation).pipe(
        Effect.repeat({
          schedule: Schedule.spaced(options.pollInterval ?? "1 second"),
          until: (c) => c !== undefined
        })
      )
      const c = completed!
      const elapsedMs = yield* elapsed
      return c.reason === "Failure"
        ? ({ outcome: "failed", message: `agent reported Failure: ${c.message}`, elapsedMs } as const)
        : ({
            outcome: "captured",
            reason: c.reason,
            message: c.message,
            ...(c.bundle ? { bundle: c.bundle } : {}),
            elapsedMs
          } as const)
    })
    return yield* run.pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          elapsed.pipe(
            Effect.map(
              (elapsedMs): LogCaptureResult => ({
                outcome: "timed-out",
                message: `no completed log capture from the node's agent within ${Duration.format(timeout)}`,
                elapsedMs
              })
            )
          )
      }),
      Effect.catch((e) =>
        elapsed.pipe(
          Effect.map((elapsedMs): LogCaptureResult => ({ outcome: "failed", message: e.message, elapsedMs }))
        )
      ),
      Effect.catchDefect((d) =>
        elapsed.pipe(
          Effect.map((elapsedMs): LogCaptureResult => ({ outcome: "failed", message: String(d), elapsedMs }))
        )
      )
    )
  })
