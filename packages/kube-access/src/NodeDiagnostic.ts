/**
 * The NodeDiagnostic custom resource (`nodediagnostics.nodemend.io/v1alpha1`, cluster-scoped, object name =
 * node name): the API types shared by the agent (which serves it), the repair controller and the kubectl plugin
 * (which request captures). The YAML the API server validates is deploy/crds/nodediagnostics.nodemend.io.yaml;
 * these Schemas decode what is read from the API server, so a hand-edited object gets a clear error, not a crash.
 */
import { Schema } from "effect"

export const NODE_DIAGNOSTIC_GROUP = "nodemend.io"
export const NODE_DIAGNOSTIC_VERSION = "v1alpha1"
export const NODE_DIAGNOSTIC_PLURAL = "nodediagnostics"
export const NODE_DIAGNOSTIC_KIND = "NodeDiagnostic"
export const NODE_DIAGNOSTIC_API_VERSION = `${NODE_DIAGNOSTIC_GROUP}/${NODE_DIAGNOSTIC_VERSION}`
export const NodeDiagnosticGVR = {
  group: NODE_DIAGNOSTIC_GROUP,
  version: NODE_DIAGNOSTIC_VERSION,
  plural: NODE_DIAGNOSTIC_PLURAL
} as const
/** The collection's API path; the object of node `n` is `nodeDiagnosticPath(n)`. */
export const NODE_DIAGNOSTICS_PATH = `/apis/${NODE_DIAGNOSTIC_API_VERSION}/${NODE_DIAGNOSTIC_PLURAL}`
export const nodeDiagnosticPath = (nodeName: string): string =>
  `${NODE_DIAGNOSTICS_PATH}/${encodeURIComponent(nodeName)}`

/** `node` keeps the bundle on the node (retrievable through the kubelet's /logs/ handler for 10 minutes). */
export const NODE_DESTINATION = "node"

export const LOG_CATEGORIES = ["Base", "Device", "Networking", "Runtime", "System", "All"] as const
export const LogCategory = Schema.Literals(LOG_CATEGORIES)
export type LogCategory = typeof LogCategory.Type

export const LogCaptureSpec = Schema.Struct({
  destination: Schema.String.check(Schema.isNonEmpty()),
  categories: Schema.optionalKey(Schema.Array(LogCategory))
})
export type LogCaptureSpec = typeof LogCaptureSpec.Type

/** DCGM's active diagnostic levels (dcgmi diag -r 1..4: short, medium, long, extra long). */
export const DCGM_DIAGNOSTIC_LEVELS = [1, 2, 3, 4] as const
export const DcgmDiagnosticLevel = Schema.Literals(DCGM_DIAGNOSTIC_LEVELS)
export type DcgmDiagnosticLevel = typeof DcgmDiagnosticLevel.Type

/** Run DCGM's active diagnostic on every GPU of the node at this level (the replacement health gate asks for it). */
export const DcgmDiagnosticSpec = Schema.Struct({ level: DcgmDiagnosticLevel })
export type DcgmDiagnosticSpec = typeof DcgmDiagnosticSpec.Type

export const NodeDiagnosticSpec = Schema.Struct({
  logCapture: Schema.optionalKey(LogCaptureSpec),
  dcgmDiagnostic: Schema.optionalKey(DcgmDiagnosticSpec)
})

export const CAPTURE_REASONS = ["Success", "SuccessWithErrors", "Failure"] as const
export const CaptureReason = Schema.Literals(CAPTURE_REASONS)
export type CaptureReason = typeof CaptureReason.Type

export const RunningState = Schema.Struct({ startedAt: Schema.String })

/**
 * The bundle as the node's agent produced it: SHA-256 (lower-case hex) and size in bytes of the tar.gz. Only that
 * node's agent may write its NodeDiagnostic's status (admission policy nodemend-agent-nodediagnostics), while any
 * agent token can read the destination URL; so a consumer checks what it downloads against this.
 */
export const BundleDigest = Schema.Struct({
  sha256: Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/)),
  size: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type BundleDigest = typeof BundleDigest.Type

export const CompletedState = Schema.Struct({
  reason: CaptureReason,
  message: Schema.String,
  startedAt: Schema.String,
  finishedAt: Schema.String,
  observedGeneration: Schema.optionalKey(Schema.Int),
  /** Set with `Success` / `SuccessWithErrors`: the delivered bundle. */
  bundle: Schema.optionalKey(BundleDigest)
})
export type CompletedState = typeof CompletedState.Type

export const CaptureState = Schema.Struct({
  running: Schema.optionalKey(RunningState),
  completed: Schema.optionalKey(CompletedState)
})

export const CaptureStatus = Schema.Struct({
  type: Schema.Literals(["Log"]),
  state: CaptureState
})
export type CaptureStatus = typeof CaptureStatus.Type

/**
 * `Pass`: DCGM ran and no test failed; `Fail`: a test failed (or DCGM reported no result at all);
 * `NotAvailable`: this node's agent has no DCGM to run it with (no GPUs, no library, no host engine, or the run
 * itself could not start).
 */
export const DCGM_DIAGNOSTIC_RESULTS = ["Pass", "Fail", "NotAvailable"] as const
export const DcgmDiagnosticResult = Schema.Literals(DCGM_DIAGNOSTIC_RESULTS)
export type DcgmDiagnosticResult = typeof DcgmDiagnosticResult.Type

/** One per-entity test result as DCGM reported it (dcgmDiagEntityResult_v1 and its error, if any). */
export const DcgmTestResult = Schema.Struct({
  test: Schema.String,
  testId: Schema.Int,
  entityGroupId: Schema.Int,
  entityId: Schema.Int,
  result: Schema.Literals(["Pass", "Skip", "Warn", "Fail", "NotRun"]),
  errorCode: Schema.optionalKey(Schema.Int),
  errorMessage: Schema.optionalKey(Schema.String)
})
export type DcgmTestResult = typeof DcgmTestResult.Type

export const DcgmDiagnosticCompleted = Schema.Struct({
  result: DcgmDiagnosticResult,
  message: Schema.String,
  level: DcgmDiagnosticLevel,
  startedAt: Schema.String,
  finishedAt: Schema.String,
  observedGeneration: Schema.optionalKey(Schema.Int),
  tests: Schema.optionalKey(Schema.Array(DcgmTestResult))
})
export type DcgmDiagnosticCompleted = typeof DcgmDiagnosticCompleted.Type

export const DcgmDiagnosticStatus = Schema.Struct({
  running: Schema.optionalKey(RunningState),
  completed: Schema.optionalKey(DcgmDiagnosticCompleted)
})

export const NodeDiagnosticStatus = Schema.Struct({
  captureStatuses: Schema.optionalKey(Schema.Array(CaptureStatus)),
  dcgmDiagnostic: Schema.optionalKey(DcgmDiagnosticStatus)
})

export const NodeDiagnostic = Schema.Struct({
  metadata: Schema.Struct({
    name: Schema.String,
    /** Set by the API server; a node cannot write it. */
    creationTimestamp: Schema.optionalKey(Schema.String),
    labels: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
    generation: Schema.optionalKey(Schema.Int),
    resourceVersion: Schema.optionalKey(Schema.String),
    uid: Schema.optionalKey(Schema.String)
  }),
  spec: Schema.optionalKey(NodeDiagnosticSpec),
  status: Schema.optionalKey(NodeDiagnosticStatus)
})
export type NodeDiagnostic = typeof NodeDiagnostic.Type

export const decodeNodeDiagnostic = Schema.decodeUnknownEffect(NodeDiagnostic)

/** The Log capture entry of a status, if any. */
export const logCaptureStatus = (nd: NodeDiagnostic): CaptureStatus | undefined =>
  nd.status?.captureStatuses?.find((s) => s.type === "Log")

/** Expands `All` (or an absent list) to every concrete category. */
export const expandCategories = (
  categories: ReadonlyArray<LogCategory> | undefined
): ReadonlySet<LogCategory> => {
  const all = LOG_CATEGORIES.filter((c) => c !== "All")
  if (!categories || categories.length === 0 || categories.includes("All")) return new Set(all)
  return new Set(categories)
}

/** Status patch bodies (merge patch on the status subresource; only this agent writes `captureStatuses`). */
export const runningStatus = (startedAt: string) => ({
  status: { captureStatuses: [{ type: "Log", state: { running: { startedAt } } }] }
})

export const completedStatus = (completed: CompletedState) => ({
  status: { captureStatuses: [{ type: "Log", state: { completed } }] }
})

/** Metadata a requester sets on the NodeDiagnostic it creates (who manages it; its owner, for garbage collection). */
export interface NodeDiagnosticRequestMetadata {
  readonly labels?: Readonly<Record<string, string>>
  readonly ownerReferences?: ReadonlyArray<{
    readonly apiVersion: string
    readonly kind: string
    readonly name: string
    readonly uid: string
  }>
}

const requestMetadata = (nodeName: string, metadata: NodeDiagnosticRequestMetadata) => ({
  name: nodeName,
  ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
  ...(metadata.ownerReferences ? { ownerReferences: metadata.ownerReferences.map((o) => ({ ...o })) } : {})
})

/** The NodeDiagnostic that asks `nodeName`'s agent for a log capture (the object is named after the node). */
export const nodeDiagnosticBody = (
  nodeName: string,
  logCapture: LogCaptureSpec,
  metadata: NodeDiagnosticRequestMetadata = {}
) => ({
  apiVersion: NODE_DIAGNOSTIC_API_VERSION,
  kind: NODE_DIAGNOSTIC_KIND,
  metadata: requestMetadata(nodeName, metadata),
  spec: {
    logCapture: {
      destination: logCapture.destination,
      ...(logCapture.categories ? { categories: [...logCapture.categories] } : {})
    }
  }
})

/** Where a requested capture stands, as seen by whoever requested it. */
export type CaptureProgress =
  | { readonly _tag: "Pending" }
  | { readonly _tag: "Running"; readonly startedAt: string }
  | { readonly _tag: "Completed"; readonly completed: CompletedState }

/**
 * Where the capture asked for by `generation` (default: the object's current one) stands. Pure. A completed
 * state for an older generation answers an earlier request and counts as pending.
 */
export const captureProgress = (
  nd: NodeDiagnostic,
  generation: number = nd.metadata.generation ?? 1
): CaptureProgress => {
  const state = logCaptureStatus(nd)?.state
  const completed = state?.completed
  if (completed && (completed.observedGeneration ?? 0) >= generation) return { _tag: "Completed", completed }
  if (state?.running) return { _tag: "Running", startedAt: state.running.startedAt }
  return { _tag: "Pending" }
}

/** Status patch bodies of a DCGM diagnostic (merge patch: `captureStatuses` is left as it is). */
export const dcgmDiagnosticRunningStatus = (startedAt: string) => ({
  status: { dcgmDiagnostic: { running: { startedAt }, completed: null } }
})

export const dcgmDiagnosticCompletedStatus = (completed: DcgmDiagnosticCompleted) => ({
  status: { dcgmDiagnostic: { running: null, completed } }
})

/** The NodeDiagnostic that asks `nodeName`'s agent for a DCGM active diagnostic at `level`. */
export const dcgmDiagnosticBody = (
  nodeName: string,
  level: DcgmDiagnosticLevel,
  metadata: NodeDiagnosticRequestMetadata = {}
) => ({
  apiVersion: NODE_DIAGNOSTIC_API_VERSION,
  kind: NODE_DIAGNOSTIC_KIND,
  metadata: requestMetadata(nodeName, metadata),
  spec: { dcgmDiagnostic: { level } }
})

/**
 * The DCGM diagnostic's result for `generation` (default: the object's current one), if the agent has written
 * it. Pure. A result for an older generation answers an earlier request: none yet.
 */
export const dcgmDiagnosticCompleted = (
  nd: NodeDiagnostic,
  generation: number = nd.metadata.generation ?? 1
): DcgmDiagnosticCompleted | undefined => {
  const completed = nd.status?.dcgmDiagnostic?.completed
  return completed && (completed.observedGeneration ?? 0) >= generation ? completed : undefined
}
