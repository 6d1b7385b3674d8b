/**
 * The agent's only doors to the API server: read its own Node, strategic-merge-patch the conditions on
 * the status subresource (content type application/strategic-merge-patch+json, so kubelet's entries are
 * merged by `type`, never replaced), and create/patch events.k8s.io/v1 Events. Every call has a timeout
 * and fails with a tagged KubeError.
 */
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { ConditionPatchEntry, CurrentCondition } from "./condition-state.ts"
import { KubeAccessError, loadKubeAccess } from "@nodemend/kube-access"
import { type KubeError, type KubeHttp, makeKubeHttp, microTime } from "./kube-http.ts"

export { KubeError } from "./kube-http.ts"

export interface NodeSnapshot {
  readonly uid: string
  readonly labels: Readonly<Record<string, string>>
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
    /** The connection itself, for the diagnostics collector's NodeDiagnostic calls (same keep-alive agent). */
    readonly http: KubeHttp
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
const SMP = "application/strategic-merge-patch+json"
const MERGE = "application/merge-patch+json"

/** generateName ending in "." is rejected by current API servers: events are named here. */
const eventName = (nodeName: string): string =>
  `${nodeName.slice(0, 200)}.${Date.now().toString(16)}${randomBytes(4).toString("hex")}`

interface RawNode {
  readonly metadata?: { readonly uid?: string }
  readonly status?: { readonly conditions?: readonly CurrentCondition[] }
}

const conditionsOf = (n: unknown): readonly CurrentCondition[] => {
  const list = (n as RawNode | undefined)?.status?.conditions
  return Array.isArray(list) ? list : []
}

export const kubeApiLayer = (
  kubeconfigPath: string | undefined,
  nodeName: string
): Layer.Layer<KubeApi, KubeAccessError> =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const http = yield* Effect.acquireRelease(
        Effect.try({
          try: () => makeKubeHttp(loadKubeAccess(kubeconfigPath)),
          catch: (e) => (e instanceof KubeAccessError ? e : new KubeAccessError({ detail: String(e) }))
        }),
        (h) => Effect.sync(() => h.close())
      )
      const nodePath = `/api/v1/nodes/${encodeURIComponent(nodeName)}`
      const eventsPath = `/apis/events.k8s.io/v1/namespaces/${EVENT_NAMESPACE}/events`
      return KubeApi.of({
        nodeName,
        http,
        readNode: http.call("read node", "GET", nodePath).pipe(
          Effect.map((n) => ({
            uid: (n as RawNode | undefined)?.metadata?.uid ?? "",
            labels:
              (n as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels ?? {},
            conditions: conditionsOf(n)
          }))
        ),
        patchConditions: (entries) =>
          http
            .call(
              "patch node status",
              "PATCH",
              `${nodePath}/status`,
              { status: { conditions: entries } },
              SMP
            )
            .pipe(Effect.map(conditionsOf)),
        createEvent: (nodeUid, e) =>
          http
            .call("create event", "POST", eventsPath, {
              apiVersion: "events.k8s.io/v1",
              kind: "Event",
              metadata: { name: eventName(nodeName), namespace: EVENT_NAMESPACE },
              eventTime: microTime(Date.now()),
              regarding: { apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid },
              type: e.type,
              reason: e.reason.slice(0, 128),
              action: e.action.slice(0, 128),
              note: e.note.slice(0, 1024),
              reportingController: REPORTING_CONTROLLER,
              reportingInstance: `nodemend-agent-${nodeName}`.slice(0, 128)
            })
            .pipe(
              Effect.map((ev) => (ev as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? "")
            ),
        bumpEventSeries: (name, count) =>
          http
            .call(
              "patch event series",
              "PATCH",
              `${eventsPath}/${encodeURIComponent(name)}`,
              { series: { count, lastObservedTime: microTime(Date.now()) } },
              MERGE
            )
            .pipe(Effect.asVoid)
      })
    })
  )
