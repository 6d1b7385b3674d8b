import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { makeWorkQueue } from "../src/controller/WorkQueue.ts"
import { cond, node } from "./fixtures.ts"

describe("work queue", () => {
  it.effect("dedupes queued keys and never hands one key to two workers", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue
      q.add("a")
      q.add("a")
      q.add("b")
      expect(q.length()).toBe(2)
      expect(yield* q.take).toBe("a")
      q.add("a") // while processing: marked dirty, not queued
      expect(yield* q.take).toBe("b")
      expect(q.length()).toBe(0)
      q.done("a") // dirty -> queued again
      expect(yield* q.take).toBe("a")
      q.shutdown()
      expect(yield* q.take).toBeUndefined()
    })
  )

  it.effect("addAfter runs on the Clock and keeps the earliest timer per key (TestClock)", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue
      q.addAfter("k", 10 * 60_000)
      q.addAfter("k", 20 * 60_000) // later: ignored
      q.addAfter("j", 5 * 60_000)
      yield* TestClock.adjust("4 minutes")
      expect(q.length()).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect(q.length()).toBe(1)
      expect(yield* q.take).toBe("j")
      q.addAfter("k", 60_000) // earlier than the 10 min timer: replaces it
      yield* TestClock.adjust("1 minute")
      expect(yield* q.take).toBe("k")
      yield* TestClock.adjust("1 hour")
      expect(q.length()).toBe(0) // the replaced timer never fires
      q.shutdown()
    })
  )
})

describe("pool counter", () => {
  it("keeps per-pool and cluster counts in step with node updates and deletes", () => {
    const config = Result.getOrThrow(decodeConfig({}))
    const c = makePoolCounter(config)
    c.upsert(node("a", [cond("Ready", "False", 0)], { pool: "p" }))
    c.upsert(node("b", [cond("Ready", "True", 0)], { pool: "p" }))
    c.upsert(node("c", [cond("Ready", "Unknown", 0)]))
    expect(c.stats().pools.get("p")).toMatchObject({ size: 2, unhealthy: 1 })
    expect(c.stats().cluster).toMatchObject({ size: 3, unhealthy: 2 })
    c.upsert(node("a", [cond("Ready", "True", 1)], { pool: "p" }))
    expect(c.stats().pools.get("p")).toMatchObject({ size: 2, unhealthy: 0 })
    c.upsert(node("b", [cond("Ready", "True", 0)], { pool: "q" }))
    expect(c.stats().pools.get("q")).toMatchObject({ size: 1, unhealthy: 0 })
    c.remove("c")
    expect(c.stats().cluster).toMatchObject({ size: 2, unhealthy: 0 })
    expect(c.unhealthyNames()).toEqual([])
  })
})
