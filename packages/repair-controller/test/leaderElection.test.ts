import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { holdLeadership } from "../src/controller/LeaderElection.ts"

const lease = {
  namespace: "ns",
  name: "lease",
  identity: "me",
  leaseDurationSeconds: 15,
  renewIntervalSeconds: 2
}

describe("holdLeadership (TestClock)", () => {
  it.effect("a renewal that never answers ends leadership within the lease duration", () =>
    Effect.gen(function* () {
      // The API server stops answering (a request may hang for the 30 s HTTP timeout, longer than the lease).
      const hold = yield* Effect.forkChild(holdLeadership({ tryAcquireOrRenew: Effect.never }, lease))
      // Another replica may take the lease 15 s after our last renewal: we must have stopped by then.
      for (let s = 0; s < lease.leaseDurationSeconds; s++) yield* TestClock.adjust("1 second")
      expect(hold.pollUnsafe()).toBeDefined()
      yield* Fiber.join(hold)
    })
  )

  it.effect("renewals that succeed keep leadership", () =>
    Effect.gen(function* () {
      const hold = yield* Effect.forkChild(holdLeadership({ tryAcquireOrRenew: Effect.succeed(true) }, lease))
      for (let s = 0; s < 60; s++) yield* TestClock.adjust("1 second")
      expect(hold.pollUnsafe()).toBeUndefined()
      yield* Fiber.interrupt(hold)
    })
  )

  it.effect("renewals that fail end leadership after the renew deadline, not before", () =>
    Effect.gen(function* () {
      const hold = yield* Effect.forkChild(
        holdLeadership({ tryAcquireOrRenew: Effect.succeed(false) }, lease)
      )
      for (let s = 0; s < 10; s++) yield* TestClock.adjust("1 second")
      expect(hold.pollUnsafe()).toBeUndefined()
      for (let s = 0; s < 5; s++) yield* TestClock.adjust("1 second")
      expect(hold.pollUnsafe()).toBeDefined()
    })
  )
})
