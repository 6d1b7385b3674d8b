/**
 * Taints go ahead of drains. While a taint is being written, and for a short quiet period after the last one,
 * drain steps wait: a wave of expiries arrives spread over a second or two (conditions written at slightly
 * different times), and the first nodes' drains (a list and up to ten evictions each) would otherwise load the
 * API server exactly when the next nodes' taints need it. A drain is minutes long; two seconds cost nothing.
 * A lone taint (one repair, no wave) holds nothing: its quiet period would only delay that one drain.
 * The hold is bounded: a steady trickle of failures (a taint every second or so) would otherwise keep the
 * quiet period from ever ending and starve every drain, so drains go ahead once a hold has lasted `maxHoldMs`.
 */
import { Clock, Effect } from "effect"

export const QUIET_AFTER_TAINT_MS = 2000
/** The longest drains wait behind one unbroken run of taint writes. */
export const MAX_DRAIN_HOLD_MS = 10_000

export interface TaintFirst {
  /** Runs a taint write, counted as in flight while it runs. */
  readonly tainting: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How long a drain step should wait now (0: go). */
  readonly drainHoldMs: (now: number) => number
}

export const makeTaintFirst = (quietMs = QUIET_AFTER_TAINT_MS, maxHoldMs = MAX_DRAIN_HOLD_MS): TaintFirst => {
  let inFlight = 0
  let lastAt = Number.NEGATIVE_INFINITY
  /** When the current hold (an unbroken run of taint writes and their quiet periods) began. */
  let holdSince = Number.NEGATIVE_INFINITY
  /** Taint writes since the current hold began: one is a lone repair, more a wave. */
  let taintsInHold = 0
  const quietLeftMs = (now: number) => Math.max(0, lastAt + quietMs - now)
  const quietHoldMs = (now: number) => (inFlight > 0 ? quietMs : taintsInHold > 1 ? quietLeftMs(now) : 0)
  return {
    tainting: (write) =>
      Effect.flatMap(Clock.currentTimeMillis, (start) => {
        if (inFlight === 0 && quietLeftMs(start) === 0) {
          holdSince = start
          taintsInHold = 0
        }
        taintsInHold++
        inFlight++
        return write.pipe(
          Effect.ensuring(
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.sync(() => {
                inFlight--
                lastAt = now
              })
            )
          )
        )
      }),
    drainHoldMs: (now) => Math.min(quietHoldMs(now), Math.max(0, holdSince + maxHoldMs - now))
  }
}
