/**
 * The agent side of NodeDiagnostic: watches only the object named after this node, and when its spec
 * generation has no completed Log capture (or DCGM diagnostic) yet, runs one (status running -> completed with
 * observedGeneration). Diagnosis never slows detection: requests run one at a time on their own fiber,
 * every step is bounded, and a wedged capture cannot stop the watch.
 */
import { tmpdir } from "node:os"
import { Clock, Duration, Effect, Layer, Queue, Schedule, type Scope } from "effect"
import type { KubeHttp } from "../k8s/kube-http.ts"
import { listWatch } from "@nodemend/kube-access"
import { type Collector, type CollectorDefaults, defaultCollectors } from "./Collectors.ts"
import { compileAllowlist, DEFAULT_DESTINATION_ALLOWLIST } from "./DestinationPolicy.ts"
import { pruneNodeBundles } from "./Delivery.ts"
import { type LogCaptureOutcome, runLogCapture } from "./LogCaptureRun.ts"
import { type DcgmDiagnosticRunner, runDcgmDiagnostic } from "./DcgmDiagnosticRun.ts"
import {
  completedStatus,
  dcgmDiagnosticCompletedStatus,
  dcgmDiagnosticRunningStatus,
  decodeNodeDiagnostic,
  logCaptureStatus,
  type NodeDiagnostic,
  NodeDiagnosticGVR,
  runningStatus
} from "@nodemend/kube-access/NodeDiagnostic"

export interface NodeDiagnosticControllerOptions {
  /** The agent's API connection (one keep-alive HTTPS agent, see k8s/kube-http.ts). */
  readonly http: KubeHttp
  readonly nodeName: string
  /** Where the host's `/` is mounted (`/` when the agent runs on the host). */
  readonly hostRoot: string
  /** Current conditions, recent detections...: written to `agent/state.json` in Base bundles. */
  readonly agentState?: () => Promise<unknown>
  /**
   * Where a URL destination may point (config `diagnostics.destinationAllowlist`): `s3://bucket[/prefix]` or
   * URL prefixes. Default: none (only `node`). A bad entry is a defect: the config decoder checks them first.
   */
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
  /**
   * Runs a DCGM active diagnostic (`spec.dcgmDiagnostic`); absent on a node without DCGM, which then answers
   * `NotAvailable`.
   */
  readonly dcgmDiagnostic?: DcgmDiagnosticRunner
}

/** Whether this object's current generation still needs a capture. Pure. */
export const needsCapture = (nd: NodeDiagnostic): boolean => {
  if (!nd.spec?.logCapture) return false
  const generation = nd.metadata.generation ?? 0
  const completed = logCaptureStatus(nd)?.state.completed
  // A `running` state without a completed one for this generation was left by an agent that stopped: redo it.
  return !(completed && (completed.observedGeneration ?? -1) >= generation)
}

/** Whether this object's current generation still needs a DCGM diagnostic. Pure. */
export const needsDcgmDiagnostic = (nd: NodeDiagnostic): boolean => {
  if (!nd.spec?.dcgmDiagnostic) return false
  const completed = nd.status?.dcgmDiagnostic?.completed
  return !(completed && (completed.observedGeneration ?? -1) >= (nd.metadata.generation ?? 0))
}

const MERGE_PATCH = "application/merge-patch+json"

export const NodeDiagnosticController = (
  options: NodeDiagnosticControllerOptions
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { nodeName, hostRoot } = options
    const { http } = options
    const allowlist = yield* Effect.try(() =>
      compileAllowlist(options.destinationAllowlist ?? DEFAULT_DESTINATION_ALLOWLIST)
    ).pipe(Effect.orDie)
    const wake = yield* Queue.sliding<void>(1)
    const poke = Queue.offer(wake, undefined)
    const collection = `/apis/${NodeDiagnosticGVR.group}/${NodeDiagnosticGVR.version}/${NodeDiagnosticGVR.plural}`
    const objectPath = `${collection}/${encodeURIComponent(nodeName)}`

    // Watch only our own object; any event (and every relist) just wakes the reconciler, which reads the
    // object itself.
    yield* listWatch({
      http,
      path: collection,
      query: { fieldSelector: `metadata.name=${nodeName}` },
      onObject: () => {
        Queue.offerUnsafe(wake, undefined)
      }
    }).pipe(Effect.forkScoped)
    yield* poke.pipe(Effect.repeat(Schedule.spaced(options.resync ?? "5 minutes")), Effect.forkScoped)

    // Node-destination bundles are deleted after their 10 minutes.
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => Effect.promise(() => pruneNodeBundles(hostRoot, now))),
      Effect.repeat(Schedule.spaced("30 seconds")),
      Effect.forkScoped
    )

    const read = http.call("read NodeDiagnostic", "GET", objectPath).pipe(
      Effect.catchIf(
        (e) => e.code === 404,
        () => Effect.succeed(undefined)
      )
    )
    const patchStatus = (body: object) =>
      http.call("patch NodeDiagnostic status", "PATCH", `${objectPath}/status`, body, MERGE_PATCH).pipe(
        Effect.asVoid,
        Effect.catchIf(
          (e) => e.code === 404,
          () => Effect.void
        )
      )

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
                allowlist,
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
            observedGeneration: generation,
            ...(outcome.bundle ? { bundle: outcome.bundle } : {})
          })
        )
        yield* Effect.logInfo("log capture finished", {
          node: nodeName,
          generation,
          reason: outcome.reason,
          collectionMs: outcome.collectionMs
        })
      })

    const diagnose = (nd: NodeDiagnostic) =>
      Effect.gen(function* () {
        const level = nd.spec!.dcgmDiagnostic!.level
        const generation = nd.metadata.generation ?? 0
        const isoNow = Clock.currentTimeMillis.pipe(Effect.map((ms) => new Date(ms).toISOString()))
        const startedAt = yield* isoNow
        yield* Effect.logInfo("DCGM diagnostic started", { node: nodeName, generation, level })
        yield* patchStatus(dcgmDiagnosticRunningStatus(startedAt))
        const outcome = yield* runDcgmDiagnostic(options.dcgmDiagnostic, level)
        yield* patchStatus(
          dcgmDiagnosticCompletedStatus({
            result: outcome.result,
            message: outcome.message.slice(0, 1024),
            level,
            startedAt,
            finishedAt: yield* isoNow,
            observedGeneration: generation,
            ...(outcome.tests ? { tests: outcome.tests } : {})
          })
        )
        yield* Effect.logInfo("DCGM diagnostic finished", {
          node: nodeName,
          generation,
          result: outcome.result
        })
      })

    const reconcile = Effect.gen(function* () {
      const raw = yield* read
      if (raw === undefined) return
      const nd = yield* decodeNodeDiagnostic(raw)
      if (needsDcgmDiagnostic(nd)) yield* diagnose(nd)
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
