// The pool a repair counts against is fixed when it is decided (issue #24: a node under repair relabelled itself into
// another pool and took that pool's only in-flight slot), and a failed repair holds its slot, counted as failed.
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { decide } from "../src/decide/decide.ts"
import { cond, node } from "./fixtures.ts"

const config = Result.getOrThrow(
  decodeConfig({ policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }] })
)
const bad = (name: string, pool: string) => node(name, [cond("KernelReady", "False", 0)], { pool })
const good = (name: string, pool: string) => node(name, [cond("KernelReady", "True", 0)], { pool })

const tenOf = (pool: string) => Array.from({ length: 10 }, (_, i) => good(`${pool}-${i}`, pool))

describe("PoolCounter: a repair counts in the pool it was decided for", () => {
  it("a node under repair that relabels itself keeps counting in its own pool, not the one it moved to", () => {
    const counter = makePoolCounter(config)
    for (const n of [...tenOf("x"), ...tenOf("y")]) counter.upsert(n)
    counter.upsert(bad("x-0", "x"))
    counter.setRepair("x-0", { pool: "x", failed: false })
    counter.upsert(bad("x-0", "y")) // the node writes pool y's label on itself
    const { pools } = counter.stats()
    expect(pools.get("x")).toMatchObject({ size: 10, repairing: 1, unhealthy: 1 })
    expect(pools.get("y")).toMatchObject({ size: 10, repairing: 0, unhealthy: 0 })
    // A genuinely failing node of pool y still gets y's one slot (10% of 10).
    const victim = bad("y-3", "y")
    counter.upsert(victim)
    const d = decide({
      config,
      node: victim,
      stats: counter.stats(),
      shifts: { _tag: "Known", shifts: [] },
      now: 120_000
    })
    expect(d._tag).toBe("Repair")
  })

  it("the record's slot cannot move the pool the decision fixed", () => {
    const counter = makePoolCounter(config)
    for (const n of tenOf("x")) counter.upsert(n)
    counter.setRepair("x-1", { pool: "x", failed: false })
    counter.setRepair("x-1", { pool: "y", failed: true })
    expect(counter.stats().pools.get("x")).toMatchObject({ repairing: 1, failed: 1 })
    expect(counter.stats().pools.get("y")).toBeUndefined()
  })

  it("a failed repair holds its pool's slot and says so; retry or abandon (the record goes) frees it", () => {
    const counter = makePoolCounter(config)
    for (const n of tenOf("x")) counter.upsert(n)
    counter.upsert(bad("x-0", "x"))
    counter.setRepair("x-0", { pool: "x", failed: true })
    const next = bad("x-5", "x")
    counter.upsert(next)
    const shifts = { _tag: "Known", shifts: [] } as const
    const held = decide({ config, node: next, stats: counter.stats(), shifts, now: 120_000 })
    expect(held).toMatchObject({ _tag: "Queued", inFlight: 1, failed: 1 })
    counter.setRepair("x-0", undefined)
    expect(decide({ config, node: next, stats: counter.stats(), shifts, now: 120_000 })._tag).toBe("Repair")
  })
})
