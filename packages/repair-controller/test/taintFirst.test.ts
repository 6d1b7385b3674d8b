import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { MAX_TAINT_HOLD_MS, makeTaintFirst, QUIET_AFTER_TAINT_MS } from "../src/actions/TaintFirst.ts"
import { makeEventRecorder } from "../src/kube/EventRecorder.ts"
import type { KubeShape, NodeEventInput } from "../src/kube/Kube.ts"

describe("TaintFirst (TestClock)", () => {
  it.effect(
    "drains wait while a taint is in flight and, after a wave, for the quiet period after the last one",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(10_000)
        const gate = makeTaintFirst()
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
        yield* gate.tainting(Effect.void)

        const release = yield* Deferred.make<void>()
        const write = yield* Effect.forkChild(gate.tainting(Deferred.await(release)))
        yield* Effect.yieldNow
        yield* TestClock.adjust("1 second")
        // Still writing: hold for a full quiet period, however long the write takes.
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(write)
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)
        yield* TestClock.adjust("1500 millis")
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(500)
        yield* TestClock.adjust("500 millis")
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
      })
  )

  it.effect(
    "a lone taint (one repair) holds its drain for nothing once written (issue #14: no fixed 2 s wait)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(10_000)
        const gate = makeTaintFirst()
        yield* gate.tainting(Effect.void)
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
        // Much later, another lone repair: no hold either.
        yield* TestClock.adjust("1 minute")
        yield* gate.tainting(Effect.void)
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
      })
  )

  it.effect("a failed taint write also ends its hold", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      const exit = yield* Effect.exit(gate.tainting(Effect.fail("conflict")))
      expect(exit._tag).toBe("Failure")
      yield* TestClock.adjust(`${QUIET_AFTER_TAINT_MS} millis`)
      expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
    })
  )
})

describe("TaintFirst: bounded hold (TestClock)", () => {
  it.effect("a steady trickle of taints does not starve drains past the maximum hold", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      // A taint every second, forever: the quiet period alone would never end.
      for (let t = 0; t < MAX_TAINT_HOLD_MS; t += 1000) {
        yield* gate.tainting(Effect.void)
        // From the second taint on it is a wave.
        if (t > 0) expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBeGreaterThan(0)
        yield* TestClock.adjust("1 second")
      }
      yield* gate.tainting(Effect.void)
      expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
    })
  )

  it.effect("after a quiet period a new run of taints holds drains again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      for (let t = 0; t <= MAX_TAINT_HOLD_MS; t += 1000) {
        yield* gate.tainting(Effect.void)
        yield* TestClock.adjust("1 second")
      }
      yield* TestClock.adjust(`${QUIET_AFTER_TAINT_MS} millis`)
      yield* gate.tainting(Effect.void)
      yield* gate.tainting(Effect.void)
      expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)
    })
  )
})

describe("TaintFirst: what waits behind a wave's starts (issue #25, TestClock)", () => {
  it.effect(
    "a journal write on the way to a taint holds the work behind it, but does not make a lone repair a wave",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(0)
        const gate = makeTaintFirst()
        const release = yield* Deferred.make<void>()
        const create = yield* Effect.forkChild(gate.starting(Deferred.await(release)))
        yield* Effect.yieldNow
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(QUIET_AFTER_TAINT_MS)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(create)
        // Its own taint follows; once written, one repair's start holds nothing.
        yield* gate.tainting(Effect.void)
        expect(gate.holdMs(yield* Clock.currentTimeMillis)).toBe(0)
      })
  )

  it.effect("queued Events are written after the wave's taints, in the order they happened", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const gate = makeTaintFirst()
      const written: string[] = []
      const kube = {
        emitNodeEvent: (_ns: string, e: NodeEventInput) => Effect.sync(() => void written.push(e.reason))
      } as unknown as KubeShape
      const events = makeEventRecorder(kube, { holdMs: gate.holdMs })
      const event = (reason: string): NodeEventInput => ({
        node: { name: "n1", uid: "u1" },
        type: "Normal",
        reason,
        action: "Repair",
        note: reason
      })
      // A wave: two taints written, the Events of their starts queued.
      yield* gate.tainting(Effect.void)
      yield* gate.tainting(Effect.void)
      yield* events.emit(event("RepairStarted"))
      yield* events.emit(event("Tainted"))
      yield* TestClock.adjust(QUIET_AFTER_TAINT_MS - 1)
      expect(written).toEqual([])
      yield* TestClock.adjust(1)
      expect(written).toEqual(["RepairStarted", "Tainted"])
      // No wave: written at once.
      yield* events.emit(event("RepairSucceeded"))
      yield* Effect.yieldNow
      expect(written).toEqual(["RepairStarted", "Tainted", "RepairSucceeded"])
    })
  )
})
