import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { makeWorkQueue } from "../src/controller/WorkQueue.ts"
import { cond, node } from "./fixtures.ts"

describe("work queue", () => {
  it("dedupes queued keys and never hands one key to two workers", async () => {
    const q = makeWorkQueue()
    q.add("a")
    q.add("a")
    q.add("b")
    expect(q.length()).toBe(2)
    const first = await q.take()
    expect(first).toBe("a")
    q.add("a") // while processing: marked dirty, not queued
    expect(await q.take()).toBe("b")
    expect(q.length()).toBe(0)
    q.done("a") // dirty -> queued again
    expect(await q.take()).toBe("a")
    q.shutdown()
    expect(await q.take()).toBeUndefined()
  })

  it("addAfter keeps the earliest timer per key", async () => {
    const q = makeWorkQueue()
    q.addAfter("k", 10_000)
    q.addAfter("k", 20)
    const t0 = Date.now()
    expect(await q.take()).toBe("k")
    expect(Date.now() - t0).toBeLessThan(5_000)
    q.shutdown()
  })
})

describe("pool counter", () => {
  it("keeps per-pool and cluster counts in step with node updates and deletes", () => {
    const config = Result.getOrThrow(decodeConfig({}))
    const c = makePoolCounter(config)
    c.upsert(node("a", [cond("Ready", "False", 0)], { pool: "p" }))
    c.upsert(node("b", [cond("Ready", "True", 0)], { pool: "p" }))
    c.upsert(node("c", [cond("Ready", "Unknown", 0)]))
    expect(c.stats().pools.get("p")).toEqual({ size: 2, unhealthy: 1 })
    expect(c.stats().cluster).toEqual({ size: 3, unhealthy: 2 })
    c.upsert(node("a", [cond("Ready", "True", 1)], { pool: "p" }))
    expect(c.stats().pools.get("p")).toEqual({ size: 2, unhealthy: 0 })
    c.upsert(node("b", [cond("Ready", "True", 0)], { pool: "q" }))
    expect(c.stats().pools.get("q")).toEqual({ size: 1, unhealthy: 0 })
    c.remove("c")
    expect(c.stats().cluster).toEqual({ size: 2, unhealthy: 0 })
    expect(c.unhealthyNames()).toEqual([])
  })
})
