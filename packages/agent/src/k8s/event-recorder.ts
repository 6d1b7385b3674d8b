/**
 * Turns Event-severity detections into events.k8s.io/v1 Events on the Node. The Event `reason` is the
 * reason code (not the condition type as in NMA) and the `note` the message. A repeat of the same reason
 * and message within the aggregation window raises the existing Event's `series.count` instead of
 * creating a new object. Every occurrence is judged by the Event budgets (event-budget.ts): the first of a
 * reason in the window is always written, a repeat spends a token of its reason's bucket and of its monitor's
 * ceiling; without one it is counted (`nodemend_agent_events_throttled_total{monitor,reason}`), folded into
 * the next series update, and named in the next `EventsThrottled` summary (a Normal Event at most once a
 * `summaryIntervalMs`, only when something was refused).
 * Runs on its own fiber so that Events never delay condition writes; a reason's first occurrence is written ahead
 * of the repeats waiting there. A create the API server could not take
 * (no answer, 429, 5xx: it is restarting or away) is retried with backoff for up to the aggregation window, so
 * an Event raised during an outage lands when the API server is back (at least once: a create that reached
 * the server but whose answer was lost may land twice).
 */
import type { KubeError } from "@nodemend/kube-access"
import { EVENTS_THROTTLED_REASON, type MonitorName } from "@nodemend/reason-codes"
import { Cause, Clock, Context, Effect, Layer, Queue, Schedule } from "effect"
import { eventsThrottledTotal, eventsTotal, inc } from "../health/metrics.ts"
import type { Detection } from "../model.ts"
import { type Budget, EventBudgets, type Throttled } from "./event-budget.ts"
import { KubeApi } from "./kube-api.ts"

export const AGGREGATION_WINDOW_MS = 10 * 60_000
const MAX_SERIES = 1024
export const THROTTLE_SUMMARY_INTERVAL_MS = 60_000
/** events.k8s.io/v1 `note` is at most 1 kB. */
const NOTE_MAX = 1024

/** The note of an `EventsThrottled` Event: per monitor and reason, how many occurrences the budgets refused. */
export const throttledNote = (throttled: readonly Throttled[], seconds: number): string => {
  const total = throttled.reduce((n, t) => n + t.count, 0)
  const head = `Event budget refused ${total} occurrence${total === 1 ? "" : "s"} in the last ${seconds} s (detected and counted; a repeat's count lands in its Event's series at its next update):`
  let note = head
  for (let i = 0; i < throttled.length; i++) {
    const t = throttled[i]!
    const part = `${i === 0 ? " " : "; "}${t.monitor} ${t.reason} ${t.count}`
    const rest = `; and ${throttled.length - i} more reasons`
    if (note.length + part.length + (i < throttled.length - 1 ? rest.length : 0) > NOTE_MAX) {
      note += rest
      break
    }
    note += part
  }
  return note
}

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

/** A detection its budgets let through, with the time they judged it. */
interface Admitted {
  readonly d: Detection
  readonly now: number
}

interface Series {
  name: string
  count: number
  lastMs: number
  throttled: number
}

export interface EventRecorderOptions {
  readonly nodeUid: Effect.Effect<string>
  /** The monitor's ceiling (`monitors.<m>.events`); each reason gets a bucket of half its burst within it. */
  readonly budgetFor: (monitor: MonitorName) => Budget
  /** How often the `EventsThrottled` summary may be written (default one minute). */
  readonly summaryIntervalMs?: number
}

export const eventRecorderLayer = (
  options: EventRecorderOptions
): Layer.Layer<EventRecorder, never, KubeApi> =>
  Layer.effect(
    EventRecorder,
    Effect.gen(function* () {
      const kube = yield* KubeApi
      // A reason's first occurrence is written before the repeats the budgets admitted (issue #39): in a storm
      // the fiber has a backlog of the storm's own Events to write (a bucket per reason, one API call each),
      // and a new reason's Event waited behind it (0.6-1.1 s in bench/storm-table.ts's cross-source row).
      const firsts: Admitted[] = []
      const repeats: Admitted[] = []
      const wake = yield* Queue.sliding<void>(1)
      const budgets = new EventBudgets(AGGREGATION_WINDOW_MS)
      const series = new Map<string, Series>()
      const summaryIntervalMs = options.summaryIntervalMs ?? THROTTLE_SUMMARY_INTERVAL_MS

      // The budget judges each occurrence when it is recorded, not when the recorder's fiber gets to it: a
      // refused one is only counted and never queued. In a storm the fiber waits on the API server for each
      // Event it writes while the readers record thousands of findings; before, all of them waited in the queue
      // until it caught up (at the end of the NPD side-by-side's input 7,700 of 7,954 refusals were not yet
      // counted), and with them their messages.
      const admit = Effect.fn("EventRecorder.admit")(function* (d: Detection) {
        const now = yield* Clock.currentTimeMillis
        const verdict = budgets.take(d.monitor, d.reason, now, options.budgetFor(d.monitor))
        if (verdict === "throttled") {
          const existing = series.get(`${d.reason}\u0000${d.message}`)
          if (existing !== undefined) existing.throttled++
          yield* inc(eventsTotal, { monitor: d.monitor, outcome: "throttled" })
          yield* inc(eventsThrottledTotal, { monitor: d.monitor, reason: d.reason })
          return
        }
        ;(verdict === "first" ? firsts : repeats).push({ d, now })
        Queue.offerUnsafe(wake, undefined)
      })

      const handle = Effect.fn("EventRecorder.handle")(function* ({ d, now }: Admitted) {
        const key = `${d.reason}\u0000${d.message}`
        const existing = series.get(key)
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

      // One summary of what the budgets refused, at most once an interval and only when something was.
      let lastSummaryMs = yield* Clock.currentTimeMillis
      const summarize = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const throttled = budgets.drainThrottled(now)
        const seconds = Math.round((now - lastSummaryMs) / 1000)
        lastSummaryMs = now
        if (throttled.length === 0) return
        const uid = yield* options.nodeUid
        const note = throttledNote(throttled, seconds)
        yield* kube
          .createEvent(uid, { type: "Normal", reason: EVENTS_THROTTLED_REASON, action: "Throttled", note })
          .pipe(
            Effect.retry({ schedule: createRetry, while: transient }),
            Effect.catch((e) =>
              Effect.logWarning("event create failed", { reason: EVENTS_THROTTLED_REASON, error: e.message })
            )
          )
      })
      yield* Effect.sleep(summaryIntervalMs).pipe(
        Effect.andThen(summarize),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("event throttle summary", cause)
        ),
        Effect.forever,
        Effect.forkScoped
      )

      const next: Effect.Effect<Admitted> = Effect.suspend(() => {
        const a = firsts.shift() ?? repeats.shift()
        return a !== undefined ? Effect.succeed(a) : Queue.take(wake).pipe(Effect.andThen(next))
      })
      yield* next.pipe(
        Effect.flatMap(handle),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("event recorder", cause)
        ),
        Effect.forever,
        Effect.forkScoped
      )
      return EventRecorder.of({
        record: admit
      })
    })
  )
