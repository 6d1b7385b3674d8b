/**
 * Writes a recording into the replay's API server at the recording's times, as the cluster it was recorded from
 * changed: a `node` line creates or relabels a Node (pool label, zone, do-not-repair), a `condition` line sets the
 * condition on the Node's status (its lastTransitionTime moves only when the status does, as the API server's
 * writers do), `deleted` deletes it, `scheduledEvent` puts the event in the kwok provider's scheduled-events
 * ConfigMap, `nodepool` writes a Karpenter NodePool (veto, budgets) and as many NodeClaims as it had. A line about
 * a Node the controller removed in the replay did not happen there: it is counted as ignored, never written.
 */
import { DO_NOT_REPAIR_ANNOTATION, KWOK_REBOOTED_AT_ANNOTATION, ZONE_LABEL } from "@nodemend/reason-codes"
import { Clock, Effect, type Fiber } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import type { ConditionView } from "../domain/NodeView.ts"
import type { HistoryEvent } from "./history.ts"
import type { MemoryApiServer } from "./memoryApiServer.ts"
import type { makeReplayRecord } from "./replayRecord.ts"

type Line<K extends HistoryEvent["kind"]> = Extract<HistoryEvent, { readonly kind: K }>

/** What the writer reads of a stored Node. */
interface StoredNode {
  readonly status?: {
    readonly conditions?: ReadonlyArray<{
      readonly type: string
      readonly status: string
      readonly lastTransitionTime?: string
    }>
  }
}

const NODES = "/api/v1/nodes"
const NODEPOOLS = "/apis/karpenter.sh/v1/nodepools"
const NODECLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
const enc = encodeURIComponent
const iso = (ms: number) => new Date(ms).toISOString()
const STRATEGIC = "application/strategic-merge-patch+json"

export const makeHistoryWriter = (
  config: ControllerConfig,
  api: MemoryApiServer,
  record: ReturnType<typeof makeReplayRecord>
) =>
  Effect.map(Effect.context<never>(), (context) =>
    historyWriterOn(config, api, record, Effect.runForkWith(context))
  )

const historyWriterOn = (
  config: ControllerConfig,
  api: MemoryApiServer,
  record: ReturnType<typeof makeReplayRecord>,
  runFork: (effect: Effect.Effect<void>) => Fiber.Fiber<void>
) => {
  /** Each Node's conditions as recorded (the flaps are the recording's, whatever the replay did). */
  const recorded = new Map<string, Map<string, ConditionView>>()
  const scopes = new Map<string, string>()
  /** Nodes the controller removed in the replay: the recording's later lines about them did not happen. */
  const removed = new Set<string>()
  const scheduled = new Map<string, Map<string, Line<"scheduledEvent">>>()
  const claims = new Map<string, number>()
  const rebootedAt = new Map<string, string>()
  let ignored = 0
  let writing = false
  api.observe((collection, type, o) => {
    if (collection !== "v1/nodes") return
    const name = String(o.metadata?.name)
    if (type === "DELETED") {
      if (!writing) removed.add(name)
      return
    }
    const at = (o.metadata?.annotations as Record<string, string> | undefined)?.[KWOK_REBOOTED_AT_ANNOTATION]
    if (at === undefined || rebootedAt.get(name) === at) return
    rebootedAt.set(name, at)
    // After this change has reached every watcher, not inside it (the fiber yields before it writes).
    runFork(Effect.andThen(Effect.yieldNow, comesBackHealthy(name)))
  })

  const call = (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    body?: unknown,
    ct?: string
  ) => api.http.call("what-if recording", method, path, body, ct)
  const absentOk = <A>(e: Effect.Effect<A, { readonly code: number | undefined }>) =>
    e.pipe(
      Effect.catchIf(
        (x) => x.code === 404,
        () => Effect.void
      )
    )

  const label = (value: string | undefined) => (value === undefined ? undefined : value === "" ? null : value)
  const labelsOf = (e: { readonly pool?: string; readonly zone?: string }) => {
    const out: Record<string, string | null> = {}
    const pool = label(e.pool)
    const zone = label(e.zone)
    if (pool !== undefined) out[config.poolLabel] = pool
    if (zone !== undefined) out[ZONE_LABEL] = zone
    return out
  }
  const ensureNode = (name: string, e: { readonly pool?: string; readonly zone?: string }) =>
    Effect.gen(function* () {
      if (e.pool !== undefined) scopes.set(name, e.pool === "" ? CLUSTER_SCOPE : e.pool)
      const found = api.peek("v1/nodes", undefined, name) as StoredNode | undefined
      const labels = labelsOf(e)
      if (found !== undefined) {
        if (Object.keys(labels).length > 0)
          yield* call(
            "PATCH",
            `${NODES}/${enc(name)}`,
            { metadata: { labels } },
            "application/merge-patch+json"
          )
        return found
      }
      const set = Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== null))
      yield* call("POST", NODES, {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name, labels: { ...set, "kubernetes.io/hostname": name }, annotations: {} },
        spec: { providerID: `kwok://${name}` },
        status: { conditions: [] }
      })
      return undefined
    })

  /**
   * A rebooted machine comes back without the faults its conditions reported (what a reboot repairs): every
   * condition a policy repairs (False or Unknown) is True again. The recording's later lines apply to it as before.
   */
  const comesBackHealthy = (name: string) =>
    Effect.gen(function* () {
      const n = api.peek("v1/nodes", undefined, name) as StoredNode | undefined
      if (n === undefined) return
      const now = iso(yield* Clock.currentTimeMillis)
      const conditions = (n.status?.conditions ?? []).flatMap((c) => {
        const p = config.policies.find((x) => x.conditionType === c.type && x.status === c.status)
        if (p === undefined) return []
        return [{ type: c.type, status: "True", reason: null, message: null, lastTransitionTime: now }]
      })
      if (conditions.length > 0)
        yield* call("PATCH", `${NODES}/${enc(name)}/status`, { status: { conditions } }, STRATEGIC)
    }).pipe(Effect.ignore)

  const node = (e: Line<"node">) =>
    Effect.gen(function* () {
      yield* ensureNode(e.node, e)
      if (e.doNotRepair === undefined) return
      yield* call(
        "PATCH",
        `${NODES}/${enc(e.node)}`,
        { metadata: { annotations: { [DO_NOT_REPAIR_ANNOTATION]: e.doNotRepair ? "true" : null } } },
        "application/merge-patch+json"
      )
    })

  const condition = (e: Line<"condition">) =>
    Effect.gen(function* () {
      const conditions = recorded.get(e.node) ?? new Map<string, ConditionView>()
      recorded.set(e.node, conditions)
      const before = [...conditions.values()]
      const old = conditions.get(e.type)
      // Kubernetes moves lastTransitionTime only when the status changes; a new reason alone keeps it.
      const since = old !== undefined && old.status === e.status ? old.lastTransitionTime : e.atMs
      // The recording's own view (its flaps), whatever the replay did to the Node.
      conditions.set(e.type, {
        type: e.type,
        status: e.status,
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
        ...(e.message !== undefined ? { message: e.message } : {}),
        ...(since !== undefined ? { lastTransitionTime: since } : {})
      })
      const scope = scopes.get(e.node) ?? CLUSTER_SCOPE
      if (removed.has(e.node)) {
        ignored++
        return record.afterRepair(e.node, scope, e.type, e.status, e.atMs)
      }
      const live = yield* ensureNode(e.node, e)
      // On the Node as it is in the replay (a reboot there may have cleared what the recording still shows).
      const current = live?.status?.conditions?.find((c) => c.type === e.type)
      const transition =
        current !== undefined && current.status === e.status && current.lastTransitionTime !== undefined
          ? current.lastTransitionTime
          : iso(e.atMs)
      yield* call(
        "PATCH",
        `${NODES}/${enc(e.node)}/status`,
        {
          status: {
            conditions: [
              {
                type: e.type,
                status: e.status,
                reason: e.reason ?? null,
                message: e.message ?? null,
                lastTransitionTime: transition,
                lastHeartbeatTime: iso(e.atMs)
              }
            ]
          }
        },
        "application/strategic-merge-patch+json"
      )
      if (record.underRepair(e.node)) record.afterRepair(e.node, scope, e.type, e.status, e.atMs)
      else record.episode(e.node, scope, before, [...conditions.values()], e.type, e.atMs)
    })

  const deleted = (e: Line<"deleted">) =>
    Effect.gen(function* () {
      recorded.delete(e.node)
      if (removed.has(e.node)) return
      writing = true
      yield* absentOk(call("DELETE", `${NODES}/${enc(e.node)}`)).pipe(
        Effect.ensuring(Effect.sync(() => (writing = false)))
      )
    })

  const scheduledEvent = (e: Line<"scheduledEvent">) =>
    Effect.gen(function* () {
      if (removed.has(e.node)) {
        ignored++
        return
      }
      yield* ensureNode(e.node, e)
      const mine = scheduled.get(e.node) ?? new Map()
      scheduled.set(e.node, mine.set(e.id, e))
      const list = [...scheduled.values()].flatMap((m) =>
        [...m.values()].map((x) => ({
          node: x.node,
          id: x.id,
          code: x.code,
          notBefore: x.notBefore,
          ...(x.notAfter !== undefined ? { notAfter: x.notAfter } : {}),
          ...(x.description !== undefined ? { description: x.description } : {}),
          ...(x.state === "completed" || x.state === "canceled" ? { ended: x.state } : {})
        }))
      )
      const body = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: config.kwok.scheduledEventsConfigMap, namespace: config.namespace },
        data: { events: JSON.stringify(list) }
      }
      const path = `/api/v1/namespaces/${enc(config.namespace)}/configmaps`
      yield* call("PUT", `${path}/${enc(config.kwok.scheduledEventsConfigMap)}`, body).pipe(
        Effect.catchIf(
          (x) => x.code === 404,
          () => call("POST", path, body)
        )
      )
    })

  const claimName = (pool: string, i: number) => `${pool}-whatif-claim-${i}`
  const nodepool = (e: Line<"nodepool">) =>
    Effect.gen(function* () {
      const have = claims.get(e.pool) ?? 0
      const want = e.deleted === true ? 0 : e.claims
      for (let i = have; i < want; i++)
        yield* call("POST", NODECLAIMS, {
          apiVersion: "karpenter.sh/v1",
          kind: "NodeClaim",
          metadata: { name: claimName(e.pool, i), labels: { "karpenter.sh/nodepool": e.pool } },
          spec: {}
        })
      for (let i = want; i < have; i++)
        yield* absentOk(call("DELETE", `${NODECLAIMS}/${enc(claimName(e.pool, i))}`))
      claims.set(e.pool, want)
      if (e.deleted === true) return yield* absentOk(call("DELETE", `${NODEPOOLS}/${enc(e.pool)}`))
      const body = {
        apiVersion: "karpenter.sh/v1",
        kind: "NodePool",
        metadata: {
          name: e.pool,
          annotations: e.doNotRepair === true ? { [DO_NOT_REPAIR_ANNOTATION]: "true" } : {}
        },
        spec: { disruption: { budgets: e.budgets ?? [] } }
      }
      yield* call("PUT", `${NODEPOOLS}/${enc(e.pool)}`, body).pipe(
        Effect.catchIf(
          (x) => x.code === 404,
          () => call("POST", NODEPOOLS, body)
        )
      )
    })

  const apply = (e: HistoryEvent): Effect.Effect<unknown, unknown> => {
    switch (e.kind) {
      case "mark":
        return Effect.void
      case "node":
        if (removed.has(e.node)) {
          ignored++
          return Effect.void
        }
        return node(e)
      case "condition":
        return condition(e)
      case "deleted":
        return deleted(e)
      case "scheduledEvent":
        return scheduledEvent(e)
      case "nodepool":
        return nodepool(e)
    }
  }

  /** The kwok provider's cloud before the first line: no zonal shift, no scheduled event (asked every few seconds). */
  const emptyCloud = Effect.forEach(
    [
      [config.kwok.zonalShiftConfigMap, { shifts: "[]" }],
      [config.kwok.scheduledEventsConfigMap, { events: "[]" }]
    ] as const,
    ([name, data]) =>
      call("POST", `/api/v1/namespaces/${enc(config.namespace)}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: config.namespace },
        data
      }),
    { discard: true }
  )

  /** Every line at its time, up to `until`: the replay's clock wakes this at each line's time. */
  const write = (events: ReadonlyArray<HistoryEvent>, until: number) =>
    Effect.gen(function* () {
      for (const e of events) {
        if (e.atMs > until) return
        const now = yield* Clock.currentTimeMillis
        if (e.atMs > now) yield* Effect.sleep(e.atMs - now)
        yield* apply(e).pipe(Effect.orDie)
      }
    })

  return { emptyCloud, write, ignored: () => ignored }
}
