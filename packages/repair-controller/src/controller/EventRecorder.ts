/**
 * Events about Nodes (events.k8s.io/v1; a cluster-scoped Node needs its Events in
 * `default`), with per-key dedupe so that a blocked breaker does not write an Event per requeue. Failures to
 * write an Event are logged and never fail a reconcile.
 */
import { Effect, Metric, Semaphore } from "effect"
import type { KubeShape, NodeEventInput } from "../kube/Kube.ts"
import { eventsDropped } from "../observability/metrics.ts"

export interface EventRecorder {
  readonly emit: (e: NodeEventInput) => Effect.Effect<void>
  /** Written before returning: for the audit trail of an irreversible step (termination). */
  readonly emitNow: (e: NodeEventInput) => Effect.Effect<void>
  /** Emits unless the same key was emitted within `ttlMs`. */
  readonly emitDeduped: (key: string, ttlMs: number, e: NodeEventInput) => Effect.Effect<void>
}

/** Events about a cluster-scoped Node must live in `default` (or `kube-system`). */
const EVENT_NAMESPACE = "default"

/** Events waiting to be written at most; beyond it new ones are dropped and counted (as client-go's broadcaster does). */
export const MAX_PENDING_EVENTS = 1000

/**
 * Events are written in the background (at most 8 at once) so that a repair step never waits on one; the
 * eventTime is taken when the step happens, so their order for readers is kept. The backlog is bounded: a
 * burst of hundreds of repairs emits faster than 8 writers drain, and each waiting event is a fiber.
 */
export const makeEventRecorder = (kube: KubeShape, maxPending = MAX_PENDING_EVENTS): EventRecorder => {
  const last = new Map<string, number>()
  const inFlight = Semaphore.makeUnsafe(8)
  let pending = 0
  const emit = (e: NodeEventInput) =>
    Effect.suspend(() => {
      if (pending >= maxPending)
        return Metric.update(Metric.withAttributes(eventsDropped, { reason: e.reason }), 1)
      pending++
      return inFlight
        .withPermits(1)(
          kube
            .emitNodeEvent(EVENT_NAMESPACE, e, new Date())
            .pipe(
              Effect.catch((err) =>
                Effect.logWarning("could not write event", { reason: e.reason, error: err.message })
              )
            )
        )
        .pipe(Effect.ensuring(Effect.sync(() => pending--)), Effect.forkDetach, Effect.asVoid)
    })
  return {
    emit,
    emitNow: (e) =>
      kube
        .emitNodeEvent(EVENT_NAMESPACE, e)
        .pipe(
          Effect.catch((err) =>
            Effect.logWarning("could not write event", { reason: e.reason, error: err.message })
          )
        ),
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
