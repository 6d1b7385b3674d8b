import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { MAX_DRAIN_HOLD_MS, makeTaintFirst, QUIET_AFTER_TAINT_MS } from "../src/actions/TaintFirst.ts"

describe("TaintFirst (TestClock)", () => {
  it.effect(
    "drains wait while a taint is in flight and, after a wave, for the quiet period after the last one",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(10_000)
        const gate = makeTaintFirst()
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
        yield* gate.tainting(Effect.void)

        const release = yield* Deferred.make<void>()
        const write = yield* Effect.forkChild(gate.tainting(Deferred.await(release)))
        yield* Effect.yieldNow
        yield* TestClock.adjust("1 second")
        // Still writing: hold for a full quiet period, however long the write takes.
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(write)
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)
        yield* TestClock.adjust("1500 millis")
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(500)
        yield* TestClock.adjust("500 millis")
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
      })
  )

  it.effect(
    "a lone taint (one repair) holds its drain for nothing once written (issue #14: no fixed 2 s wait)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(10_000)
        const gate = makeTaintFirst()
        yield* gate.tainting(Effect.void)
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
        // Much later, another lone repair: no hold either.
        yield* TestClock.adjust("1 minute")
        yield* gate.tainting(Effect.void)
        expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
      })
  )

  it.effect("a failed taint write also ends its hold", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      const exit = yield* Effect.exit(gate.tainting(Effect.fail("conflict")))
      expect(exit._tag).toBe("Failure")
      yield* TestClock.adjust(`${QUIET_AFTER_TAINT_MS} millis`)
      expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
    })
  )
})

describe("TaintFirst: bounded hold (TestClock)", () => {
  it.effect("a steady trickle of taints does not starve drains past the maximum hold", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      // A taint every second, forever: the quiet period alone would never end.
      for (let t = 0; t < MAX_DRAIN_HOLD_MS; t += 1000) {
        yield* gate.tainting(Effect.void)
        // From the second taint on it is a wave.
        if (t > 0) expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBeGreaterThan(0)
        yield* TestClock.adjust("1 second")
      }
      yield* gate.tainting(Effect.void)
      expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(0)
    })
  )

  it.effect("after a quiet period a new run of taints holds drains again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      for (let t = 0; t <= MAX_DRAIN_HOLD_MS; t += 1000) {
        yield* gate.tainting(Effect.void)
        yield* TestClock.adjust("1 second")
      }
      yield* TestClock.adjust(`${QUIET_AFTER_TAINT_MS} millis`)
      yield* gate.tainting(Effect.void)
      yield* gate.tainting(Effect.void)
      expect(gate.drainHoldMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)
    })
  )
})
