/**
 * A check that cannot observe on this host (a command that is not installed, a daemon that does not run)
 * says why on its first run, not again on every run: a warning or error equal to one the same check
 * logged less than `quietMs` ago (same level, message and annotations) is dropped; a different one, or
 * the same one after `quietMs`, is logged. Every run still counts in the check-run metrics; only the log
 * lines repeat less.
 */
import { Effect, Logger, type LogLevel } from "effect"

export const DEFAULT_QUIET_MS = 60 * 60 * 1000

const FILTERED: ReadonlySet<LogLevel.LogLevel> = new Set(["Warn", "Error"])

/** Wraps a check's run; its memory of what was logged when lives as long as the wrapper. */
export interface QuietRepeats {
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /** How many distinct warnings are remembered now (tests: the memory stays bounded). */
  readonly remembered: () => number
}

/** Make one per check and keep it across runs. */
export const makeQuietRepeats = (quietMs: number = DEFAULT_QUIET_MS): QuietRepeats => {
  const lastLogged = new Map<string, number>()
  const quiet = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function* () {
      const loggers = yield* Logger.CurrentLoggers
      const filtering = Logger.make((options) => {
        if (FILTERED.has(options.logLevel)) {
          const key = `${options.logLevel} ${JSON.stringify(options.message)}`
          const at = options.date.getTime()
          const last = lastLogged.get(key)
          if (last !== undefined && at - last < quietMs) return
          // Forget what has gone quiet, so messages that differ every run (a pid, a timestamp) cannot grow
          // the map for the life of the agent: it holds at most one hour of distinct warnings.
          for (const [k, t] of lastLogged) if (at - t >= quietMs) lastLogged.delete(k)
          lastLogged.set(key, at)
        }
        for (const logger of loggers) logger.log(options)
      })
      return yield* Effect.provideService(self, Logger.CurrentLoggers, new Set([filtering]))
    })
  return Object.assign(quiet, { remembered: () => lastLogged.size })
}
