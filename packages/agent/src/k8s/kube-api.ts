/**
 * The agent's only doors to the API server: read its own Node, strategic-merge-patch the conditions on
 * the status subresource (content type application/strategic-merge-patch+json, so kubelet's entries are
 * merged by `type`, never replaced), and create/patch events.k8s.io/v1 Events. Every call has a timeout
 * and fails with a tagged KubeError.
 */
import { AGENT_REPORTING_CONTROLLER } from "@nodemend/reason-codes"
import { Context, Effect, Layer } from "effect"
import type { ConditionPatchEntry, CurrentCondition } from "./condition-state.ts"
import {
  eventSeriesPatch,
  eventsPath,
  KubeAccessError,
  type KubeError,
  loadKubeAccess,
  NODE_EVENT_NAMESPACE,
  nodeEventBody,
  nodePath
} from "@nodemend/kube-access"
import { type KubeHttp, makeKubeHttp } from "./kube-http.ts"

export { KubeError } from "@nodemend/kube-access"

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

const SMP = "application/strategic-merge-patch+json"
const MERGE = "application/merge-patch+json"

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
      const node = nodePath(nodeName)
      const events = eventsPath(NODE_EVENT_NAMESPACE)
      return KubeApi.of({
        nodeName,
        http,
        readNode: http.call("read node", "GET", node).pipe(
          Effect.map((n) => ({
            uid: (n as RawNode | undefined)?.metadata?.uid ?? "",
            labels:
              (n as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels ?? {},
            conditions: conditionsOf(n)
          }))
        ),
        patchConditions: (entries) =>
          http
            .call("patch node status", "PATCH", `${node}/status`, { status: { conditions: entries } }, SMP)
            .pipe(Effect.map(conditionsOf)),
        createEvent: (nodeUid, e) =>
          http
            .call(
              "create event",
              "POST",
              events,
              nodeEventBody({
                ...e,
                node: { name: nodeName, uid: nodeUid },
                reportingController: AGENT_REPORTING_CONTROLLER,
                reportingInstance: `nodemend-agent-${nodeName}`
              })
            )
            .pipe(
              Effect.map((ev) => (ev as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? "")
            ),
        bumpEventSeries: (name, count) =>
          http
            .call(
              "patch event series",
              "PATCH",
              `${events}/${encodeURIComponent(name)}`,
              eventSeriesPatch(count),
              MERGE
            )
            .pipe(Effect.asVoid)
      })
    })
  )
