/**
 * Events about Nodes (events.k8s.io/v1; a cluster-scoped Node needs its Events in
 * `default`), with per-key dedupe so that a blocked breaker does not write an Event per requeue. Failures to
 * write an Event are logged and never fail a reconcile.
 */
import { Effect } from "effect"
import type { KubeShape, NodeEventInput } from "../kube/Kube.ts"

export interface EventRecorder {
  readonly emit: (e: NodeEventInput) => Effect.Effect<void>
  /** Emits unless the same key was emitted within `ttlMs`. */
  readonly emitDeduped: (key: string, ttlMs: number, e: NodeEventInput) => Effect.Effect<void>
}

/** Events about a cluster-scoped Node must live in `default` (or `kube-system`). */
const EVENT_NAMESPACE = "default"

export const makeEventRecorder = (kube: KubeShape): EventRecorder => {
  const last = new Map<string, number>()
  const emit = (e: NodeEventInput) =>
    kube.emitNodeEvent(EVENT_NAMESPACE, e).pipe(
      Effect.tap(() => Effect.logDebug("event", { node: e.node.name, reason: e.reason })),
      Effect.catch((err) =>
        Effect.logWarning("could not write event", { reason: e.reason, error: err.message })
      )
    )
  return {
    emit,
    emitDeduped: (key, ttlMs, e) =>
      Effect.suspend(() => {
        const now = Date.now()
        const at = last.get(key)
        if (at !== undefined && now - at < ttlMs) return Effect.void
        last.set(key, now)
        if (last.size > 50_000) for (const [k, t] of last) if (now - t > ttlMs) last.delete(k)
        return emit(e)
      })
  }
}
