/**
 * The agent's only doors to the API server: read its own Node, strategic-merge-patch the conditions on
 * the status subresource, and create/patch events.k8s.io/v1 Events. Every call has a timeout (client-node
 * has none by default) and fails with a tagged KubeError.
 */
import {
  ApiException,
  CoreV1Api,
  EventsV1Api,
  KubeConfig,
  Observable,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext
} from "@kubernetes/client-node"
import { Context, Data, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { ConditionPatchEntry, CurrentCondition } from "./condition-state.ts"

export class KubeError extends Data.TaggedError("KubeError")<{
  readonly operation: string
  readonly code: number | undefined
  readonly detail: string
}> {
  override get message(): string {
    return `${this.operation} failed${this.code === undefined ? "" : ` (HTTP ${this.code})`}: ${this.detail}`
  }
}

export interface NodeSnapshot {
  readonly uid: string
  readonly conditions: readonly CurrentCondition[]
}

export interface NewNodeEvent {
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly action: string
  readonly note: string
}

export class KubeApi extends Context.Service<
  KubeApi,
  {
    readonly nodeName: string
    readonly readNode: Effect.Effect<NodeSnapshot, KubeError>
    /** Strategic merge patch of `status.conditions` (merge key `type`); returns the conditions after it. */
    readonly patchConditions: (
      entries: readonly ConditionPatchEntry[]
    ) => Effect.Effect<readonly CurrentCondition[], KubeError>
    /** Creates an Event regarding the Node; returns its name. */
    readonly createEvent: (nodeUid: string, event: NewNodeEvent) => Effect.Effect<string, KubeError>
    /** Raises the series count of an Event this agent created (count >= 2). */
    readonly bumpEventSeries: (name: string, count: number) => Effect.Effect<void, KubeError>
  }
>()("@nodemend/agent/KubeApi") {}

export const REPORTING_CONTROLLER = "nodemend.io/agent"
/** Node is cluster-scoped: its Events live in `default`. */
export const EVENT_NAMESPACE = "default"
const REQUEST_TIMEOUT_MS = 10_000

const eventName = (nodeName: string): string =>
  `${nodeName.slice(0, 200)}.${Date.now().toString(16)}${randomBytes(4).toString("hex")}`

const timeoutMiddleware = (ms: number): ObservableMiddleware => ({
  pre: (ctx: RequestContext) => {
    ctx.setSignal(AbortSignal.timeout(ms))
    return new Observable(Promise.resolve(ctx))
  },
  post: (r) => new Observable(Promise.resolve(r))
})

const withTimeout = (
  opt?: ConfigurationOptions<ObservableMiddleware>
): ConfigurationOptions<ObservableMiddleware> => ({
  ...opt,
  middleware: [...(opt?.middleware ?? []), timeoutMiddleware(REQUEST_TIMEOUT_MS)],
  middlewareMergeStrategy: "append"
})

const toKubeError =
  (operation: string) =>
  (e: unknown): KubeError => {
    if (e instanceof ApiException) {
      let detail = typeof e.body === "string" ? e.body : String(e.message)
      try {
        const status = JSON.parse(detail) as { message?: string }
        if (typeof status.message === "string") detail = status.message
      } catch {
        // not a Status: keep the raw text
      }
      return new KubeError({ operation, code: e.code, detail })
    }
    return new KubeError({
      operation,
      code: undefined,
      detail: e instanceof Error ? `${e.name}: ${e.message}` : String(e)
    })
  }

const call = <A>(operation: string, f: () => Promise<A>): Effect.Effect<A, KubeError> =>
  Effect.tryPromise({ try: f, catch: toKubeError(operation) })

export const makeKubeApi = (kc: KubeConfig, nodeName: string): KubeApi["Service"] => {
  const server = kc.getCurrentCluster()?.server
  if (!server || server === "http://localhost:8080")
    throw new Error("no usable kubeconfig: no current cluster server")
  const core = kc.makeApiClient(CoreV1Api)
  const events = kc.makeApiClient(EventsV1Api)
  const smp = withTimeout(setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch))
  const merge = withTimeout(setHeaderOptions("Content-Type", PatchStrategy.MergePatch))
  const plain = withTimeout()
  return KubeApi.of({
    nodeName,
    readNode: call("read node", () => core.readNode({ name: nodeName }, plain)).pipe(
      Effect.map((n) => ({ uid: n.metadata?.uid ?? "", conditions: n.status?.conditions ?? [] }))
    ),
    patchConditions: (entries) =>
      call("patch node status", () =>
        core.patchNodeStatus({ name: nodeName, body: { status: { conditions: entries } } }, smp)
      ).pipe(Effect.map((n) => n.status?.conditions ?? [])),
    createEvent: (nodeUid, e) =>
      call("create event", () =>
        events.createNamespacedEvent(
          {
            namespace: EVENT_NAMESPACE,
            body: {
              apiVersion: "events.k8s.io/v1",
              kind: "Event",
              // generateName ending in "." is rejected by current API servers: name it ourselves.
              metadata: { name: eventName(nodeName), namespace: EVENT_NAMESPACE },
              eventTime: new V1MicroTime(),
              regarding: { apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid },
              type: e.type,
              reason: e.reason.slice(0, 128),
              action: e.action.slice(0, 128),
              note: e.note.slice(0, 1024),
              reportingController: REPORTING_CONTROLLER,
              reportingInstance: `nodemend-agent-${nodeName}`.slice(0, 128)
            }
          },
          plain
        )
      ).pipe(Effect.map((ev) => ev.metadata?.name ?? "")),
    bumpEventSeries: (name, count) =>
      call("patch event series", () =>
        events.patchNamespacedEvent(
          {
            name,
            namespace: EVENT_NAMESPACE,
            body: { series: { count, lastObservedTime: new V1MicroTime() } }
          },
          merge
        )
      ).pipe(Effect.asVoid)
  })
}

export const loadKubeConfig = (path: string | undefined): KubeConfig => {
  const kc = new KubeConfig()
  if (path === undefined) kc.loadFromCluster()
  else kc.loadFromFile(path)
  return kc
}

export const kubeApiLayer = (kubeconfigPath: string | undefined, nodeName: string): Layer.Layer<KubeApi> =>
  Layer.sync(KubeApi, () => makeKubeApi(loadKubeConfig(kubeconfigPath), nodeName))
