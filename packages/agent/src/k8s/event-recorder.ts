/**
 * Turns Event-severity detections into events.k8s.io/v1 Events on the Node. The Event `reason` is the
 * reason code (not the condition type as in NMA) and the `note` the message. A repeat of the same reason
 * and message within the aggregation window raises the existing Event's `series.count` instead of
 * creating a new object. Every API call spends a token from the emitting monitor's budget; without a
 * token the occurrence is counted (metric `outcome="throttled"`) and folded into the next series update.
 * Runs on its own fiber so that Events never delay condition writes. A create the API server could not take
 * (no answer, 429, 5xx: it is restarting or away) is retried with backoff for up to the aggregation window, so
 * an Event raised during an outage lands when the API server is back (at least once: a create that reached
 * the server but whose answer was lost may land twice).
 */
import type { MonitorName } from "@nodemend/reason-codes"
import type { KubeError } from "@nodemend/kube-access"
import { Cause, Clock, Context, Effect, Layer, Queue, Schedule } from "effect"
import { eventsTotal, inc } from "../health/metrics.ts"
import type { Detection } from "../model.ts"
import { takeToken, type Bucket, type Budget } from "./event-budget.ts"
import { KubeApi } from "./kube-api.ts"

export const AGGREGATION_WINDOW_MS = 10 * 60_000
const MAX_SERIES = 1024

/** The API server was not there to take it (no answer, throttled, 5xx): the same call may succeed later. */
const transient = (e: KubeError) => e.code === undefined || e.code === 429 || e.code >= 500

/** 0.5 s doubling to 30 s, for at most the aggregation window. */
export const createRetry = Schedule.min([
  Schedule.exponential("500 millis"),
  Schedule.spaced("30 seconds")
]).pipe(Schedule.upTo({ duration: AGGREGATION_WINDOW_MS }))

export class EventRecorder extends Context.Service<
  EventRecorder,
  {
    readonly record: (detection: Detection) => Effect.Effect<void>
  }
>()("@nodemend/agent/EventRecorder") {}

interface Series {
  name: string
  count: number
  lastMs: number
  throttled: number
}

export interface EventRecorderOptions {
  readonly nodeUid: Effect.Effect<string>
  readonly budgetFor: (monitor: MonitorName) => Budget
}

export const eventRecorderLayer = (
  options: EventRecorderOptions
): Layer.Layer<EventRecorder, never, KubeApi> =>
  Layer.effect(
    EventRecorder,
    Effect.gen(function* () {
      const kube = yield* KubeApi
      const queue = yield* Queue.unbounded<Detection>()
      const buckets = new Map<MonitorName, Bucket>()
      const series = new Map<string, Series>()

      const handle = Effect.fn("EventRecorder.handle")(function* (d: Detection) {
        const now = yield* Clock.currentTimeMillis
        const key = `${d.reason}\u0000${d.message}`
        const existing = series.get(key)
        const { ok, bucket } = takeToken(buckets.get(d.monitor), now, options.budgetFor(d.monitor))
        buckets.set(d.monitor, bucket)
        if (!ok) {
          if (existing !== undefined) existing.throttled++
          yield* inc(eventsTotal, { monitor: d.monitor, outcome: "throttled" })
          return
        }
        if (existing !== undefined && now - existing.lastMs < AGGREGATION_WINDOW_MS) {
          const count = existing.count + 1 + existing.throttled
          yield* kube.bumpEventSeries(existing.name, count).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                existing.count = count
                existing.throttled = 0
                existing.lastMs = now
              })
            ),
            Effect.tap(() => inc(eventsTotal, { monitor: d.monitor, outcome: "aggregated" })),
            Effect.catch((e) =>
              Effect.logWarning("event series update failed", { reason: d.reason, error: e.message }).pipe(
                Effect.andThen(inc(eventsTotal, { monitor: d.monitor, outcome: "failed" }))
              )
            )
          )
          return
        }
        const uid = yield* options.nodeUid
        yield* kube
          .createEvent(uid, { type: "Warning", reason: d.reason, action: "Detected", note: d.message })
          .pipe(
            Effect.tapError((e) =>
              transient(e)
                ? Effect.logWarning("event create failed; retrying", { reason: d.reason, error: e.message })
                : Effect.void
            ),
            Effect.retry({ schedule: createRetry, while: transient }),
            Effect.tap((name) =>
              Effect.sync(() => {
                series.delete(key)
                series.set(key, { name, count: 1, lastMs: now, throttled: 0 })
                if (series.size > MAX_SERIES) series.delete(series.keys().next().value!)
              })
            ),
            Effect.tap(() => inc(eventsTotal, { monitor: d.monitor, outcome: "created" })),
            Effect.catch((e) =>
              Effect.logWarning("event create failed", { reason: d.reason, error: e.message }).pipe(
                Effect.andThen(inc(eventsTotal, { monitor: d.monitor, outcome: "failed" }))
              )
            )
          )
      })

      yield* Queue.take(queue).pipe(
        Effect.flatMap(handle),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("event recorder", cause)
        ),
        Effect.forever,
        Effect.forkScoped
      )
      return EventRecorder.of({
        record: (d) => Queue.offer(queue, d).pipe(Effect.asVoid)
      })
    })
  )
