/**
 * Names what a log storm shed (issue #39): once an interval (a minute), only when something was shed, one Normal
 * Event `EventsThrottled` (action `Shed`) regarding the Node that says per source and reason "a storm of X shed
 * N findings", most first, within the 1 kB note. The first occurrence of every reason and every resolution were
 * delivered (sources/finding-lanes.ts); what was shed are repeats.
 */
import { EVENTS_THROTTLED_REASON } from "@nodemend/reason-codes"
import { Cause, Clock, Effect } from "effect"
import type { ShedReport } from "../sources/log-monitors.ts"
import { createRetry } from "./event-recorder.ts"
import { KubeApi } from "./kube-api.ts"

export const SHED_SUMMARY_INTERVAL_MS = 60_000
const NOTE_MAX = 1024

export const shedNote = (shed: readonly ShedReport[], seconds: number): string => {
  const total = shed.reduce((n, s) => n + s.count, 0)
  let note = `Log storm: ${total} repeated finding${total === 1 ? "" : "s"} shed in the last ${seconds} s (the first of every reason and every resolution were delivered):`
  for (let i = 0; i < shed.length; i++) {
    const s = shed[i]!
    const part = `${i === 0 ? " " : "; "}a storm of ${s.monitor} ${s.reason} on ${s.source} shed ${s.count} findings`
    const rest = `; and ${shed.length - i} more storms`
    if (note.length + part.length + (i < shed.length - 1 ? rest.length : 0) > NOTE_MAX) {
      note += rest
      break
    }
    note += part
  }
  return note
}

/** Runs forever: every `intervalMs`, one Event naming what was shed since the last one (none when nothing was). */
export const reportShedFindings = (options: {
  readonly drainShed: () => readonly ShedReport[]
  readonly nodeUid: Effect.Effect<string>
  readonly intervalMs?: number
}): Effect.Effect<never, never, KubeApi> =>
  Effect.gen(function* () {
    const kube = yield* KubeApi
    const intervalMs = options.intervalMs ?? SHED_SUMMARY_INTERVAL_MS
    let lastMs = yield* Clock.currentTimeMillis
    const summarize = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const shed = options.drainShed()
      const seconds = Math.round((now - lastMs) / 1000)
      lastMs = now
      if (shed.length === 0) return
      const uid = yield* options.nodeUid
      yield* kube
        .createEvent(uid, {
          type: "Normal",
          reason: EVENTS_THROTTLED_REASON,
          action: "Shed",
          note: shedNote(shed, seconds)
        })
        .pipe(
          Effect.retry({
            schedule: createRetry,
            while: (e) => e.code === undefined || e.code === 429 || e.code >= 500
          }),
          Effect.catch((e) =>
            Effect.logWarning("event create failed", { reason: EVENTS_THROTTLED_REASON, error: e.message })
          )
        )
    })
    return yield* Effect.sleep(intervalMs).pipe(
      Effect.andThen(summarize),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError("shed findings summary", cause)
      ),
      Effect.forever
    )
  })
