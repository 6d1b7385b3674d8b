// The in-flight budget per pool (issue #16): NodePool disruption budgets where they apply to repair, else maxInFlight.
import { describe, expect, it } from "vitest"
import { inFlightBudget, scaled } from "../src/decide/inFlightBudget.ts"

describe("int-or-percent, rounded up as Karpenter and PDBs do", () => {
  it.each([
    ["10%", 10, 1],
    ["10%", 11, 2],
    ["10%", 5000, 500],
    ["20%", 3, 1],
    ["0%", 10, 0],
    ["100%", 7, 7],
    ["3", 100, 3],
    ["0", 100, 0]
  ])("%s of %i -> %i", (v, size, n) => expect(scaled(v, size)).toBe(n))

  it.each(["", "10 %", "-1", "101%", "1.5", "abc"])("%j is not a budget", (v) =>
    expect(scaled(v, 10)).toBeUndefined()
  )
})

describe("inFlightBudget", () => {
  it("no NodePool: maxInFlight (default 10%: 1 of 10 at a time, 500 of 5000)", () => {
    expect(inFlightBudget({ scope: "p", size: 10, maxInFlight: "10%", now: 0 })).toEqual({
      allowed: 1,
      source: 'maxInFlight "10%"'
    })
    expect(inFlightBudget({ scope: "p", size: 5000, maxInFlight: "10%", now: 0 }).allowed).toBe(500)
  })

  it("a NodePool's budgets for repair (no reasons, or Unhealthy) bound it; the tightest wins", () => {
    const b = inFlightBudget({
      scope: "gpu",
      size: 20,
      maxInFlight: "50%",
      now: 0,
      nodePoolBudgets: [
        { nodes: "20%" },
        { nodes: "2", reasons: ["Unhealthy"] },
        { nodes: "0", reasons: ["Drifted"] }
      ]
    })
    expect(b).toEqual({ allowed: 2, source: 'nodepool gpu disruption budget "2"' })
  })

  it("budgets that name only other reasons leave maxInFlight in charge", () => {
    const b = inFlightBudget({
      scope: "gpu",
      size: 20,
      maxInFlight: "10%",
      now: 0,
      nodePoolBudgets: [{ nodes: "0", reasons: ["Empty"] }]
    })
    expect(b.allowed).toBe(2)
  })

  it("a scheduled budget bounds repair inside its window only (@daily, 10m: 00:00-00:10 UTC)", () => {
    const at = (iso: string) =>
      inFlightBudget({
        scope: "gpu",
        size: 20,
        maxInFlight: "10%",
        now: Date.parse(iso),
        nodePoolBudgets: [{ nodes: "0", schedule: "@daily", duration: "10m" }]
      })
    expect(at("2026-12-07T00:05:00Z")).toEqual({
      allowed: 0,
      source:
        'nodepool gpu disruption budget "0" (schedule "@daily", duration 10m) active until 2026-12-07T00:10:00Z',
      until: Date.parse("2026-12-07T00:10:00Z")
    })
    expect(at("2026-12-07T00:10:00Z")).toEqual({ allowed: 2, source: 'maxInFlight "10%"' })
  })
})
