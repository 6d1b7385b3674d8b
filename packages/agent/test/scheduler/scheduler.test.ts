import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Logger, Metric, Random } from "effect"
import { TestClock } from "effect/testing"
import { checkDurationMs } from "../../src/health/metrics.ts"
import type { Finding } from "../../src/model.ts"
import { CheckError, type PeriodicCheck } from "../../src/scheduler/periodic-check.ts"
import { makeQuietRepeats } from "../../src/scheduler/quiet-repeats.ts"
import { runScheduler } from "../../src/scheduler/scheduler.ts"

interface Run {
  readonly name: string
  readonly start: number
  readonly end: number
}

const check = (name: string, intervalMs: number, body?: PeriodicCheck["run"]): PeriodicCheck => ({
  name,
  monitor: "kernel",
  intervalMs,
  run: body ?? (() => Effect.succeed([]))
})

const start = (
  checks: readonly PeriodicCheck[],
  extra: {
    listPids?: Effect.Effect<readonly number[]>
    sink?: (f: readonly Finding[]) => Effect.Effect<void>
  } = {}
) =>
  Effect.gen(function* () {
    const runs: Run[] = []
    const fiber = yield* runScheduler({
      checks,
      sink: extra.sink ?? (() => Effect.void),
      listPids: extra.listPids ?? Effect.succeed([1]),
      spacingMs: 10,
      onRun: (name, s, e) => runs.push({ name, start: s, end: e })
    }).pipe(Effect.forkChild)
    return { runs, fiber }
  })

describe("scheduler", () => {
  it.effect(
    "first run of each check lands in [0, 20%] of its interval, spread over it, then strictly periodic",
    () =>
      Effect.gen(function* () {
        // 16 checks of one interval: without jitter they would all fall due at 0 (then 11 ms apart, the spacing).
        const same = Array.from({ length: 16 }, (_, i) => check(`j${i}`, 60_000))
        const { runs, fiber } = yield* start([
          check("a", 60_000),
          check("b", 300_000),
          check("c", 600_000),
          ...same
        ])
        yield* TestClock.adjust("30 minutes")
        yield* Fiber.interrupt(fiber)
        const starts = (n: string) => runs.filter((r) => r.name === n).map((r) => r.start)
        // Both bounds, for every check; a collision can push a first run past the window by the spacing (11 ms) per
        // check due before it.
        const slack = 19 * 11
        for (const [name, interval] of [
          ["a", 60_000],
          ["b", 300_000],
          ["c", 600_000],
          ...same.map((c) => [c.name, 60_000] as const)
        ] as const) {
          const first = starts(name)[0]!
          expect(first, name).toBeGreaterThanOrEqual(0)
          expect(first, name).toBeLessThanOrEqual(0.2 * interval + slack)
        }
        // Spread over the window, not bunched at its start: distinct offsets covering most of [0, 12 s].
        const firsts = same.map((c) => starts(c.name)[0]!).sort((x, y) => x - y)
        expect(new Set(firsts).size).toBe(16)
        expect(firsts[0]!).toBeLessThan(0.05 * 60_000)
        expect(firsts.at(-1)! - firsts[0]!).toBeGreaterThan(0.12 * 60_000)
        expect(firsts.filter((t) => t > 0.1 * 60_000).length).toBeGreaterThanOrEqual(4)
        // periodic: consecutive runs of "a" are one interval apart (give or take the spacing of a collision)
        const a = starts("a")
        for (let i = 1; i < a.length; i++) expect(a[i]! - a[i - 1]!).toBeGreaterThanOrEqual(60_000 - slack)
        expect(a.length).toBeGreaterThanOrEqual(29)
        expect(starts("c").length).toBe(3)
      }).pipe(Random.withSeed(7))
  )

  it.effect("never runs two checks within the spacing, even when they fall due together", () =>
    Effect.gen(function* () {
      const checks = Array.from({ length: 12 }, (_, i) => check(`k${i}`, 1000))
      const { runs, fiber } = yield* start(checks)
      yield* TestClock.adjust("1 minute")
      yield* Fiber.interrupt(fiber)
      const sorted = [...runs].sort((x, y) => x.start - y.start)
      expect(sorted.length).toBeGreaterThan(100)
      for (let i = 1; i < sorted.length; i++)
        expect(sorted[i]!.start - sorted[i - 1]!.end).toBeGreaterThanOrEqual(10)
    }).pipe(Random.withSeed(3))
  )

  it.effect("checks due in the same tick share one /proc listing", () =>
    Effect.gen(function* () {
      let listings = 0
      const seen: number[] = []
      const uses = (name: string) =>
        check(name, 1000, (tick) =>
          tick.pids.pipe(
            Effect.tap((p) => Effect.sync(() => seen.push(p[0]!))),
            Effect.as([])
          )
        )
      // A slow check makes the others fall due together while it runs.
      const slow = check("slow", 100_000, () => Effect.sleep("5 seconds").pipe(Effect.as([])))
      const { fiber } = yield* start([slow, uses("x"), uses("y"), uses("z")], {
        listPids: Effect.sync(() => {
          listings++
          return [listings]
        })
      }).pipe(Random.withSeed(0))
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.interrupt(fiber)
      const perListing = new Map<number, number>()
      for (const n of seen) perListing.set(n, (perListing.get(n) ?? 0) + 1)
      expect(listings).toBe(perListing.size)
      expect(Math.max(...perListing.values())).toBe(3)
    })
  )

  it.effect("a check's duration is read from the Clock: 5 s of TestClock is 5000 ms in its histogram", () =>
    Effect.gen(function* () {
      const slow = check("duration-5s", 100_000, () => Effect.sleep("5 seconds").pipe(Effect.as([])))
      const { runs, fiber } = yield* start([slow])
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.interrupt(fiber)
      expect(runs.map((r) => r.end - r.start)).toEqual([5000])
      const h = yield* Metric.value(Metric.withAttributes(checkDurationMs, { check: "duration-5s" }))
      expect([h.count, h.sum]).toEqual([1, 5000])
    })
  )

  it.effect("a failing check is logged and does not stop the others; findings reach the sink", () =>
    Effect.gen(function* () {
      const got: Finding[] = []
      const finding: Finding = {
        _tag: "Resolution",
        monitor: "networking",
        reason: "IPAMDNotRunning",
        conditionType: "NetworkingReady",
        observedAtMs: 0
      }
      const { runs, fiber } = yield* start(
        [
          check("bad", 1000, () => Effect.fail(new CheckError({ check: "bad", detail: "boom" }))),
          check("dies", 1000, () => Effect.die("oops")),
          check("good", 1000, () => Effect.succeed([finding]))
        ],
        { sink: (f) => Effect.sync(() => got.push(...f)) }
      )
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.interrupt(fiber)
      expect(runs.filter((r) => r.name === "bad").length).toBeGreaterThanOrEqual(4)
      expect(runs.filter((r) => r.name === "dies").length).toBeGreaterThanOrEqual(4)
      expect(got.length).toBeGreaterThanOrEqual(4)
    })
  )
})

describe("a check's repeated warnings", () => {
  const captured = (lines: string[]) =>
    Logger.layer([
      Logger.make((o) => {
        lines.push(`${o.logLevel} ${JSON.stringify(o.message)}`)
      })
    ])

  it.effect("the same warning is logged once an hour, a different one at once; every run still runs", () => {
    const lines: string[] = []
    let runs = 0
    let message = "timedatectl failed"
    const noisy = check("clock-sync", 300_000, () =>
      Effect.logWarning(message, { error: "exit 1" }).pipe(
        Effect.andThen(Effect.sync(() => runs++)),
        Effect.as([])
      )
    )
    return Effect.gen(function* () {
      const { fiber } = yield* start([noisy])
      yield* TestClock.adjust("59 minutes")
      const sameWithinAnHour = lines.filter((l) => l.includes("timedatectl failed")).length
      expect(runs).toBeGreaterThanOrEqual(11)
      expect(sameWithinAnHour).toBe(1)
      yield* TestClock.adjust("6 minutes")
      expect(lines.filter((l) => l.includes("timedatectl failed"))).toHaveLength(2)
      message = "timedatectl timed out"
      yield* TestClock.adjust("5 minutes")
      expect(lines.filter((l) => l.includes("timedatectl timed out"))).toHaveLength(1)
      expect(lines.every((l) => l.startsWith("Warn "))).toBe(true)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(captured(lines)))
  })

  it.effect("a failing check's 'periodic check failed' warning is quieted the same way, per check", () => {
    const lines: string[] = []
    const failing = (name: string) =>
      check(name, 300_000, () => Effect.fail(new CheckError({ check: name, detail: "no such file" })))
    return Effect.gen(function* () {
      const { fiber } = yield* start([failing("zram"), failing("zombies")])
      yield* TestClock.adjust("30 minutes")
      const failed = lines.filter((l) => l.includes("periodic check failed"))
      expect(failed.filter((l) => l.includes('"zram"'))).toHaveLength(1)
      expect(failed.filter((l) => l.includes('"zombies"'))).toHaveLength(1)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(captured(lines)))
  })
})

describe("makeQuietRepeats", () => {
  it.effect(
    "remembers at most the last hour of distinct warnings (a message that changes every run cannot grow it)",
    () => {
      const quiet = makeQuietRepeats(60 * 60 * 1000)
      const lines: string[] = []
      const logger = Logger.layer([Logger.make((o) => void lines.push(String(o.message)))])
      return Effect.gen(function* () {
        for (let run = 0; run < 48; run++) {
          yield* quiet(Effect.logWarning(`ctr failed: pid ${run}`))
          yield* TestClock.adjust("5 minutes")
        }
        expect(lines).toHaveLength(48)
        expect(quiet.remembered()).toBeLessThanOrEqual(12)
      }).pipe(Effect.provide(logger))
    }
  )
})
