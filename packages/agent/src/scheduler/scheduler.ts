/**
 * One scheduler for every periodic check: a single fiber and a sequential queue ordered by due time.
 * Each check's first run is offset by a uniform random delay in [0, 20%] of its interval (so checks with
 * the same interval do not bunch up after every agent restart, nor fall due at once on every node of a
 * rollout), then it repeats at its interval. Two
 * check runs are always at least `spacingMs` apart (end of one to start of the next). Checks that fall
 * due together form one tick and share the tick's cached /proc listing.
 */
import { Clock, Duration, Effect, Metric, Random } from "effect"
import { checkDurationMs, checkRunsTotal, inc } from "../health/metrics.ts"
import type { Finding } from "../model.ts"
import type { PeriodicCheck, TickContext } from "./periodic-check.ts"
import { makeQuietRepeats, type QuietRepeats } from "./quiet-repeats.ts"

export const JITTER_FRACTION = 0.2

/** A first run's offset: uniform in [0, JITTER_FRACTION] of the interval (Random: Math.random unless seeded). */
export const startupJitterMs = (intervalMs: number): Effect.Effect<number> =>
  Effect.map(Random.next, (r) => Math.floor(r * JITTER_FRACTION * intervalMs))

export interface SchedulerOptions {
  readonly checks: readonly PeriodicCheck[]
  /** Where findings go (config overrides, ConditionWriter, EventRecorder). */
  readonly sink: (findings: readonly Finding[]) => Effect.Effect<void>
  /** Lists the pid directories of <hostRoot>/proc. Called at most once per tick. */
  readonly listPids: Effect.Effect<readonly number[]>
  readonly spacingMs: number
  /** Observability hook (bench, tests): called after every run with its start and end time. */
  readonly onRun?: (name: string, startMs: number, endMs: number) => void
}

interface Slot {
  readonly check: PeriodicCheck
  /** The check's warnings, once per distinct cause per hour (a missing host tool is not news every run). */
  readonly quiet: QuietRepeats
  due: number
}

/** A once-per-tick memo of the /proc listing. */
const makeTick = (listPids: Effect.Effect<readonly number[]>, nowMs: number): TickContext => {
  let cached: readonly number[] | undefined
  return {
    nowMs,
    pids: Effect.suspend(() =>
      cached !== undefined
        ? Effect.succeed(cached)
        : listPids.pipe(Effect.tap((p) => Effect.sync(() => (cached = p))))
    )
  }
}

const runOne = (slot: Slot, tick: TickContext, options: SchedulerOptions) =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const startNs = yield* Clock.monotonicTimeNanos
    const findings = yield* slot.check.run(tick).pipe(
      Effect.tap(() => inc(checkRunsTotal, { check: slot.check.name, outcome: "ok" })),
      Effect.catch((e) =>
        Effect.logWarning("periodic check failed", { check: slot.check.name, error: e.message }).pipe(
          Effect.andThen(inc(checkRunsTotal, { check: slot.check.name, outcome: "error" })),
          Effect.as([] as readonly Finding[])
        )
      ),
      Effect.catchDefect((defect) =>
        Effect.logError("periodic check crashed", { check: slot.check.name, defect: String(defect) }).pipe(
          Effect.andThen(inc(checkRunsTotal, { check: slot.check.name, outcome: "defect" })),
          Effect.as([] as readonly Finding[])
        )
      ),
      slot.quiet
    )
    yield* Metric.update(
      Metric.withAttributes(checkDurationMs, { check: slot.check.name }),
      Number((yield* Clock.monotonicTimeNanos) - startNs) / 1e6
    )
    const end = yield* Clock.currentTimeMillis
    options.onRun?.(slot.check.name, start, end)
    yield* Effect.logDebug("check run", {
      check: slot.check.name,
      startMs: start,
      endMs: end,
      findings: findings.length
    })
    if (findings.length > 0) yield* options.sink(findings)
    return end
  })

/** Runs forever; fork it. */
export const runScheduler = (options: SchedulerOptions): Effect.Effect<never> =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const slots: Slot[] = []
    for (const check of options.checks) {
      const offset = yield* startupJitterMs(check.intervalMs)
      slots.push({ check, quiet: makeQuietRepeats(), due: start + offset })
    }
    let lastEnd = Number.NEGATIVE_INFINITY
    if (slots.length === 0) return yield* Effect.never
    // Clock time is in whole milliseconds: wait one more so the real gap is never below the spacing.
    const gap = options.spacingMs > 0 ? options.spacingMs + 1 : 0
    while (true) {
      const earliest = Math.min(...slots.map((s) => s.due))
      yield* waitUntil(Math.max(earliest, lastEnd + gap))
      const tickNow = yield* Clock.currentTimeMillis
      const tick = makeTick(options.listPids, tickNow)
      const due = slots.filter((s) => s.due <= tickNow).sort((a, b) => a.due - b.due)
      for (const slot of due) {
        yield* waitUntil(lastEnd + gap)
        lastEnd = yield* runOne(slot, tick, options)
        // Strictly periodic; a run that fell far behind skips the missed turns instead of bursting.
        slot.due = Math.max(slot.due + slot.check.intervalMs, lastEnd)
      }
    }
  })

/** Sleeps until the clock reads at least `target` (timers may fire a little early). */
const waitUntil = (target: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    let now = yield* Clock.currentTimeMillis
    while (now < target) {
      yield* Effect.sleep(Duration.millis(target - now))
      now = yield* Clock.currentTimeMillis
    }
  })
