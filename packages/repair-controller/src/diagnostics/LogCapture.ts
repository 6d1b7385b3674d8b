/**
 * Capture before termination: when a policy says `captureLogs: true`, the controller asks the node's agent
 * for a log bundle (a NodeDiagnostic named after the node) and waits a bounded time for the result. This
 * never fails and never blocks past the bound: the outcome is a value, and the repair proceeds whatever it is.
 *
 * The NodeDiagnostic is owned by the Node, so the garbage collector removes it with the Node.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node"
import {
  type CompletedState,
  captureProgress,
  decodeNodeDiagnostic,
  type LogCategory,
  NodeDiagnosticGVR,
  nodeDiagnosticBody
} from "@nodemend/agent/diagnostics/NodeDiagnostic"
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
      readonly elapsedMs: number
    }
  | { readonly outcome: "failed"; readonly message: string; readonly elapsedMs: number }
  | { readonly outcome: "timed-out"; readonly message: string; readonly elapsedMs: number }

class CaptureRequestFailed extends Error {}

const code = (e: unknown) => (e as { code?: number } | null)?.code
const describe = (e: unknown) => {
  const c = code(e)
  if (c !== undefined) {
    const body = (e as { body?: unknown }).body
    let msg = ""
    if (typeof body === "string") {
      try {
        msg = (JSON.parse(body) as { message?: string }).message ?? ""
      } catch {
        msg = body.slice(0, 200)
      }
    }
    return `HTTP ${c}${msg ? `: ${msg}` : ""}`
  }
  return e instanceof Error ? e.message : String(e)
}

const api = <A>(f: (signal: AbortSignal) => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e })

/** Creates a fresh NodeDiagnostic for the node (replacing an old one, whose status would be stale); returns its generation. */
const requestCapture = (kc: KubeConfig, nodeName: string, options: LogCaptureOptions) =>
  Effect.gen(function* () {
    const core = kc.makeApiClient(CoreV1Api)
    const custom = kc.makeApiClient(CustomObjectsApi)
    const node = yield* api(() => core.readNode({ name: nodeName })).pipe(
      Effect.mapError(
        (e) => new CaptureRequestFailed(code(e) === 404 ? `node ${nodeName} not found` : describe(e))
      )
    )
    const body = nodeDiagnosticBody(
      nodeName,
      { destination: options.destination, categories: options.categories ?? ["All"] },
      {
        labels: { "app.kubernetes.io/managed-by": "nodemend-repair-controller" },
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: node.metadata?.uid ?? "" }]
      }
    )
    const create = api(
      () => custom.createClusterCustomObject({ ...NodeDiagnosticGVR, body }) as Promise<unknown>
    )
    const created = yield* create.pipe(
      Effect.catchIf(
        (e) => code(e) === 409,
        () =>
          // An earlier capture (or a user's) left one behind: its status describes another request.
          api(() => custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: nodeName })).pipe(
            Effect.andThen(create.pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 10 })))
          )
      ),
      Effect.mapError((e) => new CaptureRequestFailed(`could not create NodeDiagnostic: ${describe(e)}`))
    )
    const view = yield* decodeNodeDiagnostic(created).pipe(
      Effect.mapError((e) => new CaptureRequestFailed(`unexpected NodeDiagnostic: ${e.message}`))
    )
    return view.metadata.generation ?? 1
  })

const readCompleted = (kc: KubeConfig, nodeName: string, generation: number) => {
  const custom = kc.makeApiClient(CustomObjectsApi)
  return api(
    () => custom.getClusterCustomObject({ ...NodeDiagnosticGVR, name: nodeName }) as Promise<unknown>
  ).pipe(
    Effect.flatMap(decodeNodeDiagnostic),
    Effect.map((nd): CompletedState | undefined => {
      const progress = captureProgress(nd, generation)
      return progress._tag === "Completed" ? progress.completed : undefined
    }),
    // A transient read error is just "not yet"; the overall bound still applies.
    Effect.catch(() => Effect.succeed(undefined))
  )
}

/**
 * Asks the node's agent for a log bundle and waits up to `options.timeout`. Always succeeds with a result.
 * `k8s` is anything holding the controller's KubeConfig (the repair controller's Kube service does).
 */
export const captureLogsBeforeTermination = (
  k8s: { readonly kc: KubeConfig },
  nodeName: string,
  options: LogCaptureOptions
): Effect.Effect<LogCaptureResult> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const elapsed = Clock.currentTimeMillis.pipe(Effect.map((now) => now - started))
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const run = Effect.gen(function* () {
      const generation = yield* requestCapture(k8s.kc, nodeName, options)
      const completed = yield* readCompleted(k8s.kc, nodeName, generation).pipe(
        Effect.repeat({
          schedule: Schedule.spaced(options.pollInterval ?? "1 second"),
          until: (c) => c !== undefined
        })
      )
      const c = completed!
      const elapsedMs = yield* elapsed
      return c.reason === "Failure"
        ? ({ outcome: "failed", message: `agent reported Failure: ${c.message}`, elapsedMs } as const)
        : ({ outcome: "captured", reason: c.reason, message: c.message, elapsedMs } as const)
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
