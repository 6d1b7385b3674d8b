import { describe, expect, it } from "vitest"
import { makeDrainPool } from "../src/controller/DrainPool.ts"

describe("DrainPool", () => {
  it("admits up to the bound, parks the rest and hands freed slots out in order of expiry", () => {
    const woken: string[] = []
    const pool = makeDrainPool(2, (n) => woken.push(n))
    expect(pool.enter("a", "node-a", 100)).toBe(true)
    expect(pool.enter("b", "node-b", 200)).toBe(true)
    // Parked out of order of arrival: d expired before c.
    expect(pool.enter("c", "node-c", 400)).toBe(false)
    expect(pool.enter("d", "node-d", 300)).toBe(false)
    expect(pool.enter("c", "node-c", 400)).toBe(false) // asking again keeps its place, no duplicate
    expect([pool.inFlight(), pool.waiting()]).toEqual([2, 2])
    pool.leave("a")
    expect(woken).toEqual(["node-d"])
    // A repair arriving now cannot overtake the one already in line.
    expect(pool.enter("e", "node-e", 50)).toBe(false)
    expect(pool.enter("d", "node-d", 300)).toBe(true)
    pool.leave("b")
    expect(woken).toEqual(["node-d", "node-e"])
    expect([pool.inFlight(), pool.waiting()]).toEqual([2, 1])
  })

  it("a repair that ends while parked gives up its place; leaving twice frees one slot", () => {
    const woken: string[] = []
    const pool = makeDrainPool(1, (n) => woken.push(n))
    expect(pool.enter("a", "na", 1)).toBe(true)
    expect(pool.enter("b", "nb", 2)).toBe(false)
    expect(pool.enter("c", "nc", 3)).toBe(false)
    pool.leave("b")
    pool.leave("a")
    pool.leave("a")
    expect(woken).toEqual(["nc"])
    expect([pool.inFlight(), pool.waiting()]).toEqual([1, 0])
  })
})
