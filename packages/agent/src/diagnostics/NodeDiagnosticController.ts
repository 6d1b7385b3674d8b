/**
 * The agent side of NodeDiagnostic: watches only the object named after this node, and when its spec
 * generation has no completed Log capture yet, runs one (status running -> completed with
 * observedGeneration). Diagnosis never slows detection: captures run one at a time on their own fiber,
 * every step is bounded, and a wedged capture cannot stop the watch.
 */
import { tmpdir } from "node:os"
import {
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch
} from "@kubernetes/client-node"
import { Duration, Effect, Layer, Queue, Schedule, type Scope } from "effect"
import { type Collector, type CollectorDefaults, defaultCollectors } from "./Collectors.ts"
import { DEFAULT_DESTINATION_ALLOWLIST } from "./DestinationPolicy.ts"
import { pruneNodeBundles } from "./Delivery.ts"
import { type LogCaptureOutcome, runLogCapture } from "./LogCaptureRun.ts"
import {
  completedStatus,
  decodeNodeDiagnostic,
  logCaptureStatus,
  type NodeDiagnostic,
  NodeDiagnosticGVR,
  runningStatus
} from "./NodeDiagnostic.ts"

export interface NodeDiagnosticControllerOptions {
  readonly kubeConfig: KubeConfig
  readonly nodeName: string
  /** Where the host's `/` is mounted (`/` when the agent runs on the host). */
  readonly hostRoot: string
  /** Current conditions, recent detections...: written to `agent/state.json` in Base bundles. */
  readonly agentState?: () => Promise<unknown>
  /** Host patterns a URL destination must match. Default: S3 presigned hosts. */
  readonly destinationAllowlist?: ReadonlyArray<string>
  /** Spool + bundle scratch space (not under the host root). Default: os.tmpdir(). */
  readonly workDir?: string
  /** Override the collector set (tests, or a trimmed set for special nodes). */
  readonly collectors?: (
    hostRoot: string,
    agentState?: (signal: AbortSignal) => Promise<unknown>
  ) => ReadonlyArray<Collector>
  readonly collectorDefaults?: CollectorDefaults
  /** Bound on one whole collection. Default 2 minutes. */
  readonly captureDeadline?: Duration.Input
  /** Bound on one upload. Default 5 minutes. */
  readonly uploadTimeout?: Duration.Input
  /** Re-read the object this often even without watch events. Default 5 minutes. */
  readonly resync?: Duration.Input
}

/** Whether this object's current generation still needs a capture. Pure. */
export const needsCapture = (nd: NodeDiagnostic): boolean => {
  if (!nd.spec?.logCapture) return false
  const generation = nd.metadata.generation ?? 0
  const completed = logCaptureStatus(nd)?.state.completed
  // A `running` state without a completed one for this generation was left by an agent that stopped: redo it.
  return !(completed && (completed.observedGeneration ?? -1) >= generation)
}

/**
 * Pause before re-watching: none after the server's normal end of a watch or the client's inactivity timeout;
 * after an HTTP error (no CRD installed yet: 404, no RBAC: 403) an exponential pause from 1 s doubling up to
 * 1 minute, so a CRD installed just after the agent is picked up at once while a missing one costs one request
 * a minute, not a hot loop; 2 seconds after network errors. `failures` counts consecutive HTTP errors.
 */
export const watchBackoff = (err: unknown, failures = 1): Duration.Input => {
  if (err === null || err === undefined) return Duration.zero
  const e = err as { statusCode?: unknown; name?: unknown }
  if (typeof e.statusCode === "number") return Duration.seconds(Math.min(60, 2 ** Math.max(0, failures - 1)))
  if (e.name === "TimeoutError") return Duration.zero
  return "2 seconds"
}

const isNotFound = (e: unknown) => (e as { code?: number } | null)?.code === 404

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)

export const NodeDiagnosticController = (
  options: NodeDiagnosticControllerOptions
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { nodeName, hostRoot } = options
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi)
    const wake = yield* Queue.sliding<void>(1)
    const poke = Queue.offer(wake, undefined)
    const path = `/apis/${NodeDiagnosticGVR.group}/${NodeDiagnosticGVR.version}/${NodeDiagnosticGVR.plural}`

    // Watch only our own object; any event just wakes the reconciler, which reads the object itself.
    let httpFailures = 0
    const watchOnce = Effect.callback<void>((resume) => {
      let ctl: AbortController | undefined
      let closed = false
      new Watch(options.kubeConfig)
        .watch(
          path,
          { fieldSelector: `metadata.name=${nodeName}`, allowWatchBookmarks: true, timeoutSeconds: 25 },
          (type) => {
            if (type !== "BOOKMARK") Effect.runFork(poke)
          },
          (err: unknown) => {
            closed = true
            const status = (err as { statusCode?: unknown } | null)?.statusCode
            httpFailures = typeof status === "number" ? httpFailures + 1 : 0
            resume(Effect.sleep(watchBackoff(err, httpFailures)))
          }
        )
        .then(
          (c) => {
            ctl = c
            if (closed) c.abort()
          },
          () => resume(Effect.sleep("2 seconds"))
        )
      return Effect.sync(() => ctl?.abort())
    })
    // Each (re)connect without a resourceVersion replays ADDED for an existing object, which wakes the reconciler.
    yield* watchOnce.pipe(Effect.repeat(Schedule.spaced("200 millis")), Effect.forkScoped)
    yield* poke.pipe(Effect.repeat(Schedule.spaced(options.resync ?? "5 minutes")), Effect.forkScoped)

    // Node-destination bundles are deleted after their 10 minutes.
    yield* Effect.promise(() => pruneNodeBundles(hostRoot, Date.now())).pipe(
      Effect.repeat(Schedule.spaced("30 seconds")),
      Effect.forkScoped
    )

    const read = Effect.tryPromise({
      try: () => custom.getClusterCustomObject({ ...NodeDiagnosticGVR, name: nodeName }) as Promise<unknown>,
      catch: (e) => e
    }).pipe(
      Effect.map((o): unknown => o),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined))
    )
    const patchStatus = (body: object) =>
      Effect.tryPromise({
        try: () =>
          custom.patchClusterCustomObjectStatus({ ...NodeDiagnosticGVR, name: nodeName, body }, mergePatch),
        catch: (e) => e
      }).pipe(Effect.catchIf(isNotFound, () => Effect.void))

    const agentState = options.agentState
    const collectors = (
      options.collectors ??
      ((root, state) => defaultCollectors({ hostRoot: root, ...(state ? { agentState: state } : {}) }))
    )(hostRoot, agentState ? () => agentState() : undefined)
    const capture = (nd: NodeDiagnostic) =>
      Effect.gen(function* () {
        const spec = nd.spec!.logCapture!
        const generation = nd.metadata.generation ?? 0
        const startedAt = new Date().toISOString()
        yield* Effect.logInfo("log capture started", { node: nodeName, generation })
        yield* patchStatus(runningStatus(startedAt))
        const outcome: LogCaptureOutcome = yield* Effect.tryPromise({
          try: (signal) =>
            runLogCapture(
              spec,
              {
                nodeName,
                hostRoot,
                workDir: options.workDir ?? tmpdir(),
                allowlist: options.destinationAllowlist ?? DEFAULT_DESTINATION_ALLOWLIST,
                collectors,
                ...(options.collectorDefaults ? { collectorDefaults: options.collectorDefaults } : {}),
                captureDeadlineMs: Duration.toMillis(
                  Duration.fromInputUnsafe(options.captureDeadline ?? "2 minutes")
                ),
                uploadTimeoutMs: Duration.toMillis(
                  Duration.fromInputUnsafe(options.uploadTimeout ?? "5 minutes")
                )
              },
              signal
            ),
          catch: (e) => e
        }).pipe(
          Effect.catch((e) =>
            Effect.succeed<LogCaptureOutcome>({ reason: "Failure", message: String(e), uploaded: false })
          )
        )
        yield* patchStatus(
          completedStatus({
            reason: outcome.reason,
            message: outcome.message.slice(0, 1024),
            startedAt,
            finishedAt: new Date().toISOString(),
            observedGeneration: generation
          })
        )
        yield* Effect.logInfo("log capture finished", {
          node: nodeName,
          generation,
          reason: outcome.reason,
          collectionMs: outcome.collectionMs
        })
      })

    const reconcile = Effect.gen(function* () {
      const raw = yield* read
      if (raw === undefined) return
      const nd = yield* decodeNodeDiagnostic(raw)
      if (needsCapture(nd)) yield* capture(nd)
    }).pipe(
      Effect.catch((e) =>
        Effect.logWarning("NodeDiagnostic reconcile failed; retrying in 5 s", {
          node: nodeName,
          error: String(e)
        }).pipe(Effect.andThen(Effect.sleep("5 seconds").pipe(Effect.andThen(poke), Effect.forkScoped)))
      ),
      Effect.catchDefect((d) =>
        Effect.logError("NodeDiagnostic reconcile defect", { node: nodeName, defect: String(d) })
      )
    )
    yield* Queue.take(wake).pipe(Effect.andThen(reconcile), Effect.forever, Effect.forkScoped)
  })

/** The controller as a Layer, for a binary that composes its main from Layers. */
export const nodeDiagnosticControllerLayer = (options: NodeDiagnosticControllerOptions): Layer.Layer<never> =>
  Layer.effectDiscard(NodeDiagnosticController(options))
