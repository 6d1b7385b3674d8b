// The NVIDIA monitor's polls on the agent's one scheduler (issue 38, item 5): the startup jitter that spreads
// a rollout's first polls, and the shared sequential queue. Against the C test doubles of libdcgm / libnvml,
// on the TestClock (native calls take real time; the clock is stepped with a little real time in between).
import { describe, expect, it } from "@effect/vitest"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { HealthResult, HealthSystem } from "@nodemend/dcgm-native"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import { type Duration, Effect, Fiber, Layer, Random, Schema } from "effect"
import { TestClock } from "effect/testing"
import { beforeEach } from "vitest"
import type { Finding } from "../../src/model.ts"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import { makeNvidiaMonitor } from "../../src/monitors/nvidia/monitor.ts"
import { NvidiaMonitorSettings } from "../../src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import type { PeriodicCheck } from "../../src/scheduler/periodic-check.ts"
import { runScheduler, startupJitterMs } from "../../src/scheduler/scheduler.ts"
import { hostWithGpus } from "./gpu-host.ts"
import { runNvidiaMonitorScheduled } from "./run-monitor.ts"

const doubles = buildGpuDoubles()
const injector = new GpuDoubleInjector(doubles)

const settings = (over: Record<string, unknown>) =>
  Schema.decodeUnknownSync(NvidiaMonitorSettings)({
    dcgmLibraryPath: doubles.dcgm,
    nvmlLibraryPath: doubles.nvml,
    hostRoot: hostWithGpus(8),
    ...over
  })

interface Run {
  readonly name: string
  readonly start: number
  readonly end: number
}

/** Steps virtual time (with real time in between for the native calls) until `done` holds. */
const stepUntil = (done: () => boolean, step: Duration.Input, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300 && !done(); i++) {
      yield* TestClock.adjust(step)
      yield* TestClock.withLive(Effect.sleep("10 millis"))
    }
    if (!done()) throw new Error(`timed out stepping the clock for ${what}`)
  })

beforeEach(() => {
  injector.reset()
  injector.setGpuCount(8)
  injector.nvmlSetDeviceCount(8)
})

describe("NVIDIA polls on the agent's scheduler", () => {
  it.effect(
    "two agents (seeded by their node names) start their NVML polls at different offsets within the jitter window",
    () =>
      Effect.gen(function* () {
        // NVML only: the NVML poll is the monitor's one periodic check, so it takes the seed's first draw.
        const s = settings({ dcgmLibraryPath: "/nonexistent/libdcgm.so.4", pollSeconds: 300 })
        const layers = Layer.mergeAll(NvidiaLibraries.layer(s), XidDeduplicator.layer)
        const agent = (node: string) =>
          Effect.gen(function* () {
            const runs: Run[] = []
            const polled: Finding[] = []
            const fiber = yield* runNvidiaMonitorScheduled(
              { settings: s },
              { findings: (fs) => Effect.sync(() => polled.push(...fs)), status: () => Effect.void },
              { spacingMs: 10, onRun: (name, start, end) => runs.push({ name, start, end }) }
            ).pipe(Effect.scoped, Effect.provide(layers), Random.withSeed(node), Effect.forkChild)
            const expected = yield* startupJitterMs(300_000).pipe(Random.withSeed(node))
            return { node, runs, polled, fiber, expected }
          })
        const a = yield* agent("ip-10-0-1-17.ec2.internal")
        const b = yield* agent("ip-10-0-2-41.ec2.internal")
        // both schedulers read their start time (virtual 0) before the clock moves
        yield* TestClock.withLive(Effect.sleep("50 millis"))
        const firstPoll = (x: typeof a) => x.runs.find((r) => r.name === "nvidia-nvml-poll")?.start
        yield* stepUntil(
          () => firstPoll(a) !== undefined && firstPoll(b) !== undefined,
          "1 second",
          "both agents' first NVML poll"
        )
        for (const x of [a, b]) {
          const first = firstPoll(x)!
          // the scheduler's offset for this seed, to the step: within [0, 20 %] of the 300 s interval
          expect(first, x.node).toBeGreaterThanOrEqual(x.expected)
          expect(first, x.node).toBeLessThan(x.expected + 1000)
          expect(first, x.node).toBeLessThanOrEqual(60_000 + 1000)
          // the run was a real NVML poll: it reached the device-count verdict
          expect(
            x.polled.some((f) => f.reason === "NvidiaDeviceCountMismatch"),
            x.node
          ).toBe(true)
        }
        // not in step: the two first polls are seconds apart (the old fibers polled both at 0)
        expect(Math.abs(firstPoll(a)! - firstPoll(b)!)).toBeGreaterThan(5_000)
        yield* Fiber.interrupt(a.fiber)
        yield* Fiber.interrupt(b.fiber)
      })
  )

  it.effect(
    "every DCGM poll and health check is a run of the shared queue: one check at a time, spaced, with the others",
    () =>
      Effect.gen(function* () {
        // dcgm_errors.h v4.6.0: 14 DCGM_FR_NVLINK_DOWN; a WARN incident is an Event at every health check
        injector.addHealthIncident({
          system: HealthSystem.NVLINK,
          health: HealthResult.WARN,
          code: 14,
          message: "GPU 2's NvLink link 5 is currently down",
          entityId: 2
        })
        const s = settings({ pollSeconds: 60 })
        const findings: Finding[] = []
        const runs: Run[] = []
        let inFlight = 0
        let maxInFlight = 0
        // counts real concurrency (native calls finish in real time, while virtual time stands still)
        const counted = (c: PeriodicCheck): PeriodicCheck => ({
          ...c,
          run: (tick) =>
            Effect.acquireUseRelease(
              Effect.sync(() => (maxInFlight = Math.max(maxInFlight, ++inFlight))),
              () => c.run(tick),
              () => Effect.sync(() => inFlight--)
            )
        })
        // the other checks: 2 s of work each, every minute, like a slow host command
        const others = ["pid-usage", "interfaces", "io-delays"].map(
          (name): PeriodicCheck => ({
            name,
            monitor: "kernel",
            intervalMs: 60_000,
            run: () => Effect.sleep("2 seconds").pipe(Effect.as([]))
          })
        )
        const fiber = yield* Effect.gen(function* () {
          const monitor = yield* makeNvidiaMonitor(
            { settings: s },
            { findings: (fs) => Effect.sync(() => findings.push(...fs)), status: () => Effect.void }
          )
          yield* Effect.forkScoped(monitor.run)
          return yield* runScheduler({
            checks: [...others, ...monitor.checks].map(counted),
            sink: () => Effect.void,
            listPids: Effect.succeed([]),
            spacingMs: 10,
            onRun: (name, start, end) => runs.push({ name, start, end })
          })
        }).pipe(
          Effect.scoped,
          Effect.provide(Layer.mergeAll(NvidiaLibraries.layer(s), XidDeduplicator.layer)),
          Random.withSeed("ip-10-0-3-9.ec2.internal"),
          Effect.forkChild
        )
        // the session is open before the first poll falls due (the doubles answer in real time)
        yield* Effect.promise(() =>
          waitFor("policy registration", () => injector.registrationCount() === 1, { timeoutMs: 3000 })
        )
        const count = (name: string) => runs.filter((r) => r.name === name).length
        yield* stepUntil(() => count("nvidia-dcgm-poll") >= 5, "2 seconds", "five DCGM polls")
        yield* Fiber.interrupt(fiber)

        expect(maxInFlight).toBe(1)
        const sorted = [...runs].sort((x, y) => x.start - y.start)
        for (let i = 1; i < sorted.length; i++)
          expect(
            sorted[i]!.start - sorted[i - 1]!.end,
            `${sorted[i - 1]!.name} -> ${sorted[i]!.name}`
          ).toBeGreaterThanOrEqual(10)
        expect(count("nvidia-dcgm-health")).toBeGreaterThanOrEqual(4)
        expect(count("pid-usage")).toBeGreaterThanOrEqual(4)
        // Every poll the monitor made was one of the queue's runs, and nothing polled besides: one device-count
        // verdict per DCGM poll run, each inside it; one NvLink WARN per health check run.
        const pollRuns = runs.filter((r) => r.name === "nvidia-dcgm-poll")
        const verdicts = findings.filter((f) => f.reason === "NvidiaDeviceCountMismatch")
        expect(verdicts.length).toBe(pollRuns.length)
        for (const v of verdicts)
          expect(pollRuns.some((r) => v.observedAtMs >= r.start && v.observedAtMs <= r.end)).toBe(true)
        const warns = findings.filter((f) => f.reason === "DCGMHealthCode14")
        expect(warns.length).toBe(count("nvidia-dcgm-health"))
      })
  )
})
