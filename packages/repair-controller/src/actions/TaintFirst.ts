/**
 * Taints go ahead of everything else a repair writes. While a repair's start (its journal entry, then its taint) is
 * being written, and for a short quiet period after the last taint of a wave, the work behind the taints waits: the
 * steps after a taint (replacement launches, drains, log captures, terminations) and the queued Events. A wave of
 * expiries arrives spread over a second or two (conditions written at slightly different times), and the first
 * nodes' later steps (a Node or an instance launched, a list and up to ten evictions, an Event or two each) would
 * otherwise load the API server exactly when the next nodes' taints need it (issue #25: expiry -> taint p99). A
 * repair is minutes long; two seconds cost nothing.
 * A lone taint (one repair, no wave) holds nothing: its quiet period would only delay that one repair.
 * The hold is bounded: a steady trickle of failures (a taint every second or so) would otherwise keep the
 * quiet period from ever ending and starve every repair, so the work goes ahead once a hold has lasted `maxHoldMs`.
 */
import { Clock, Effect } from "effect"

export const QUIET_AFTER_TAINT_MS = 2000
/** The longest the work behind the taints waits for one unbroken run of taint writes. */
export const MAX_TAINT_HOLD_MS = 10_000

export interface TaintFirst {
  /** Runs a taint write, counted as in flight while it runs. */
  readonly tainting: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs a write on the way to a taint (the repair's journal entry), counted as in flight while it runs; unlike a
   * taint it does not make a lone repair a wave.
   */
  readonly starting: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How long the work behind the taints (a step after a taint, an Event write) should wait now (0: go). */
  readonly holdMs: (now: number) => number
}

export const makeTaintFirst = (quietMs = QUIET_AFTER_TAINT_MS, maxHoldMs = MAX_TAINT_HOLD_MS): TaintFirst => {
  let inFlight = 0
  let lastAt = Number.NEGATIVE_INFINITY
  /** When the current hold (an unbroken run of taint writes and their quiet periods) began. */
  let holdSince = Number.NEGATIVE_INFINITY
  /** Taint writes since the current hold began: one is a lone repair, more a wave. */
  let taintsInHold = 0
  const quietLeftMs = (now: number) => Math.max(0, lastAt + quietMs - now)
  const quietHoldMs = (now: number) => (inFlight > 0 ? quietMs : taintsInHold > 1 ? quietLeftMs(now) : 0)
  const inFlightWhile =
    (taint: boolean) =>
    <A, E, R>(write: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Clock.currentTimeMillis, (start) => {
        if (inFlight === 0 && quietLeftMs(start) === 0) {
          holdSince = start
          taintsInHold = 0
        }
        if (taint) taintsInHold++
        inFlight++
        return write.pipe(
          Effect.ensuring(
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.sync(() => {
                inFlight--
                if (taint) lastAt = now
              })
            )
          )
        )
      })
  return {
    tainting: inFlightWhile(true),
    starting: inFlightWhile(false),
    holdMs: (now) => Math.min(quietHoldMs(now), Math.max(0, holdSince + maxHoldMs - now))
  }
}
