import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { CloudError, type InstanceState } from "../../src/cloud/CloudProvider.ts"
import { makeTerminateBatcher, type TerminateCall } from "../../src/cloud/aws/TerminateBatcher.ts"

/** A TerminateInstances stand-in with EC2's rule: one unknown id fails the whole call. */
const recorder = (known: ReadonlySet<string>) => {
  const calls: string[][] = []
  const call: TerminateCall = (ids) =>
    Effect.sync(() => {
      calls.push([...ids])
      if (ids.some((id) => !known.has(id))) return "not-found" as const
      return new Map(ids.map((id) => [id, "shutting-down" as InstanceState]))
    })
  return { calls, call }
}

describe("TerminateBatcher", () => {
  it.effect("coalesces requests within the window into one call", () =>
    Effect.gen(function* () {
      const r = recorder(new Set(["i-1", "i-2", "i-3"]))
      const terminate = yield* makeTerminateBatcher(r.call, "100 millis")
      const fiber = yield* Effect.all(["i-1", "i-2", "i-3", "i-1"].map(terminate), {
        concurrency: "unbounded"
      }).pipe(Effect.forkChild)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual([
        "shutting-down",
        "shutting-down",
        "shutting-down",
        "shutting-down"
      ])
      expect(r.calls).toEqual([["i-1", "i-2", "i-3"]])
    })
  )

  it.effect("an unknown id in a batch is retried alone; the others still terminate", () =>
    Effect.gen(function* () {
      const r = recorder(new Set(["i-1", "i-3"]))
      const terminate = yield* makeTerminateBatcher(r.call, "100 millis")
      const fiber = yield* Effect.all(["i-1", "i-2", "i-3"].map(terminate), {
        concurrency: "unbounded"
      }).pipe(Effect.forkChild)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual(["shutting-down", "not-found", "shutting-down"])
      expect(r.calls).toEqual([["i-1", "i-2", "i-3"], ["i-1"], ["i-2"], ["i-3"]])
    })
  )

  it.effect("a failed call fails every waiter with the CloudError", () =>
    Effect.gen(function* () {
      const err = new CloudError({ operation: "TerminateInstances", message: "boom", retryable: true })
      const terminate = yield* makeTerminateBatcher(() => Effect.fail(err), "100 millis")
      const fiber = yield* Effect.all(
        ["i-1", "i-2"].map((id) => Effect.flip(terminate(id))),
        {
          concurrency: "unbounded"
        }
      ).pipe(Effect.forkChild)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual([err, err])
    })
  )
})
