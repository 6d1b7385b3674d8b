import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { makeBlockedNodes } from "../src/controller/BlockedNodes.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { cond, node } from "./fixtures.ts"

const config = Result.getOrThrow(
  decodeConfig({ policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }] })
)
const bad = (name: string, pool: string) => node(name, [cond("KernelReady", "False", 0)], { pool })
const good = (name: string, pool: string) => node(name, [cond("KernelReady", "True", 0)], { pool })

describe("a breaker that closes is noticed at once (issue #14)", () => {
  it("a recovery in a pool wakes the nodes its breaker held back, and only that pool's", () => {
    const woken: string[] = []
    const blocked = makeBlockedNodes((n) => woken.push(n))
    const counter = makePoolCounter(config)
    counter.onChange((scope, eased) => (eased ? blocked.eased(scope) : undefined))
    for (const n of [bad("a0", "a"), bad("a1", "a"), bad("a2", "a"), bad("b0", "b")]) counter.upsert(n)
    blocked.block("a0", "a")
    blocked.block("a1", "a")
    blocked.block("b0", "b")
    woken.length = 0
    counter.upsert(good("a2", "a"))
    expect(woken.sort()).toEqual(["a0", "a1"])
  })

  it("a finished repair (the journal lets go) eases its pool; a new unhealthy node does not", () => {
    const eased: string[] = []
    const counter = makePoolCounter(config)
    counter.onChange((scope, e) => (e ? eased.push(scope) : undefined))
    counter.upsert(good("x", "p"))
    counter.setRepair("x", { byLabel: true, failed: false })
    eased.length = 0
    counter.upsert(bad("y", "p"))
    expect(eased).toEqual([])
    counter.upsert(good("z", "p"))
    expect(eased).toEqual(["<cluster>", "p"])
    eased.length = 0
    counter.setRepair("x", undefined)
    expect(eased.sort()).toEqual(["<cluster>", "p"])
  })

  it("an unblocked node is not woken", () => {
    const woken: string[] = []
    const blocked = makeBlockedNodes((n) => woken.push(n))
    blocked.block("n", "p")
    blocked.unblock("n")
    blocked.eased("p")
    expect(woken).toEqual([])
  })

  it("a node whose Node is deleted mid-repair keeps its slot until the repair ends (capacity not back yet)", () => {
    const counter = makePoolCounter(config)
    for (const n of [good("a", "p"), good("b", "p"), good("c", "p")]) counter.upsert(n)
    counter.setRepair("a", { byLabel: true, failed: false })
    expect(counter.stats().pools.get("p")).toMatchObject({ size: 3, unhealthy: 1 })
    counter.remove("a") // RemovingNode: the Node object is gone
    expect(counter.stats().pools.get("p")).toMatchObject({ size: 3, unhealthy: 1 })
    counter.upsert(good("a-r1", "p")) // the replacement joins
    expect(counter.stats().pools.get("p")).toMatchObject({ size: 4, unhealthy: 1 })
    counter.setRepair("a", undefined) // replacement Ready: the repair ends
    expect(counter.stats().pools.get("p")).toMatchObject({ size: 3, unhealthy: 0 })
    counter.remove("b") // a Node deleted with no repair leaves at once
    expect(counter.stats().pools.get("p")).toMatchObject({ size: 2, unhealthy: 0 })
  })
})
