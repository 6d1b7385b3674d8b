/**
 * Events about Nodes (events.k8s.io/v1; a cluster-scoped Node needs its Events in
 * `default`), with per-key dedupe so that a blocked breaker does not write an Event per requeue. Failures to
 * write an Event are logged and never fail a reconcile.
 */
import { Clock, Effect, Metric } from "effect"
import type { KubeShape, NodeEventInput } from "./Kube.ts"
import { eventsDropped } from "../observability/metrics.ts"

export interface EventRecorder {
  readonly emit: (e: NodeEventInput) => Effect.Effect<void>
  /** Written before returning: for the audit trail of an irreversible step (termination). */
  readonly emitNow: (e: NodeEventInput) => Effect.Effect<void>
  /** Emits unless the same key was emitted within `ttlMs`. */
  readonly emitDeduped: (key: string, ttlMs: number, e: NodeEventInput) => Effect.Effect<void>
}

/**
 * How long a repeated Event of one key (a node's RepairRefused, RepairDeferred, WouldRepair, RepairStandDown,
 * RepairRecordInvalid...) is written once. EvictionBlocked alone repeats each minute (actions/drain.ts).
 */
export const EVENT_DEDUPE_MS = 15 * 60_000

/** Events about a cluster-scoped Node must live in `default` (or `kube-system`). */
const EVENT_NAMESPACE = "default"

/** Events waiting to be written at most; beyond it new ones are dropped and counted (as client-go's broadcaster does). */
export const MAX_PENDING_EVENTS = 10_000
const WRITERS = 8

/**
 * Events are written in the background so that a repair step never waits on one; the eventTime is taken when
 * the step happens, so their order for readers is kept. A burst of hundreds of repairs emits thousands of
 * events faster than the API server takes them: they wait as plain objects in one bounded queue (about 1 KiB
 * each) drained by at most 8 writer fibers, not as a fiber per event. The writers step aside for `holdMs` (the
 * eventTime still says when the step happened).
 */
export const makeEventRecorder = (
  kube: KubeShape,
  options: {
    readonly maxPending?: number
    /** How long queued writes wait now, behind writes that matter more (a wave's taints: TaintFirst); 0: go. */
    readonly holdMs?: (now: number) => number
  } = {}
): EventRecorder => {
  const { maxPending = MAX_PENDING_EVENTS, holdMs = () => 0 } = options
  const last = new Map<string, number>()
  const queue: Array<{ readonly e: NodeEventInput; readonly at: Date }> = []
  let writers = 0
  const held = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const ms = holdMs(now)
    return ms > 0 ? Effect.sleep(ms) : Effect.void
  })
  // Takes the next event, or retires this writer in the same synchronous step (so emit never strands one).
  const writeNext: Effect.Effect<void> = Effect.suspend(() => {
    const next = queue.shift()
    if (next === undefined) {
      writers--
      return Effect.void
    }
    return kube.emitNodeEvent(EVENT_NAMESPACE, next.e, next.at).pipe(
      // Any failure, defects included: a writer that died would never take the next event.
      Effect.catchCause((cause) =>
        Effect.logWarning("could not write event", { reason: next.e.reason, error: String(cause) })
      ),
      Effect.andThen(held),
      Effect.andThen(writeNext)
    )
  })
  const emit = (e: NodeEventInput) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (queue.length >= maxPending)
        return Metric.update(Metric.withAttributes(eventsDropped, { reason: e.reason }), 1)
      queue.push({ e, at: new Date(now) })
      if (writers >= WRITERS) return Effect.void
      writers++
      return held.pipe(Effect.andThen(writeNext), Effect.forkDetach, Effect.asVoid)
    })
  return {
    emit,
    emitNow: (e) =>
      Clock.currentTimeMillis
        .pipe(Effect.flatMap((now) => kube.emitNodeEvent(EVENT_NAMESPACE, e, new Date(now))))
        .pipe(
          Effect.catch((err) =>
            Effect.logWarning("could not write event", { reason: e.reason, error: err.message })
          )
        ),
    emitDeduped: (key, ttlMs, e) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const at = last.get(key)
        if (at !== undefined && now - at < ttlMs) return Effect.void
        last.set(key, now)
        if (last.size > 50_000) for (const [k, t] of last) if (now - t > ttlMs) last.delete(k)
        return emit(e)
      })
  }
}
