// NodePool disruption budgets read as Karpenter reads them (issue #38 item 1): UTC cron, its macros, `duration`,
// and the CRD's validation (kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go). Fixed instants; 2026-12-07 is a Monday.
import { describe, expect, it } from "vitest"
import { budgetState, nodePoolBound } from "../src/decide/budgetWindow.ts"
import { inFlightBudget } from "../src/decide/inFlightBudget.ts"
import type { DisruptionBudget } from "../src/domain/NodePool.ts"

const t = (iso: string) => Date.parse(iso)
const BUSINESS_HOURS: DisruptionBudget = { nodes: "0", schedule: "0 9 * * 1-5", duration: "8h" }

/** The in-flight bound of a 20-node pool `gpu` (maxInFlight 10%: 2) at `iso`. */
const bound = (budgets: ReadonlyArray<DisruptionBudget>, iso: string) =>
  inFlightBudget({ scope: "gpu", size: 20, maxInFlight: "10%", nodePoolBudgets: budgets, now: t(iso) })

describe("the business-hours freeze [{nodes 0, schedule '0 9 * * 1-5', duration 8h}]", () => {
  it("holds repair on a Monday at 10:00 UTC and says when the window ends", () => {
    expect(bound([BUSINESS_HOURS], "2026-12-07T10:00:00Z")).toEqual({
      allowed: 0,
      source:
        'nodepool gpu disruption budget "0" (schedule "0 9 * * 1-5", duration 8h) active until 2026-12-07T17:00:00Z',
      until: t("2026-12-07T17:00:00Z")
    })
  })

  it.each([
    ["Monday 09:00:00, the hit itself", 0, "2026-12-07T09:00:00Z"],
    ["Monday 16:59:59.999", 0, "2026-12-07T16:59:59.999Z"],
    ["Friday 12:00", 0, "2026-12-11T12:00:00Z"],
    ["Monday 17:00 exactly (the window is [hit, hit + duration))", 2, "2026-12-07T17:00:00Z"],
    ["Monday 08:59:59", 2, "2026-12-07T08:59:59Z"],
    ["Sunday noon", 2, "2026-12-06T12:00:00Z"],
    ["Saturday 10:00", 2, "2026-12-12T10:00:00Z"],
    ["Friday 17:00", 2, "2026-12-11T17:00:00Z"]
  ])("%s: allowed %i", (_, allowed, iso) => expect(bound([BUSINESS_HOURS], iso).allowed).toBe(allowed))

  it("outside the window the config's maxInFlight bounds repair, as with no NodePool budget", () => {
    expect(bound([BUSINESS_HOURS], "2026-12-06T12:00:00Z")).toEqual({
      allowed: 2,
      source: 'maxInFlight "10%"'
    })
  })
})

describe("the pair [{nodes 10%}, {nodes 0, schedule, duration}]", () => {
  const pair: ReadonlyArray<DisruptionBudget> = [{ nodes: "10%" }, BUSINESS_HOURS]
  it("inside the window the scheduled 0 wins; outside, the always-active 10%", () => {
    expect(bound(pair, "2026-12-07T10:00:00Z")).toMatchObject({
      allowed: 0,
      until: t("2026-12-07T17:00:00Z")
    })
    expect(bound(pair, "2026-12-06T12:00:00Z")).toEqual({
      allowed: 2,
      source: 'nodepool gpu disruption budget "10%"'
    })
    expect(bound(pair, "2026-12-07T17:00:00Z").allowed).toBe(2)
  })
})

describe("overlapping budgets", () => {
  const noon: DisruptionBudget = { nodes: "0", schedule: "0 12 * * *", duration: "8h" }
  it("the tightest active budget holds; among equals the one that holds longest is named", () => {
    // 09:00-17:00 and 12:00-20:00 both allow 0 at 16:00: the pool is held until 20:00.
    expect(bound([BUSINESS_HOURS, noon], "2026-12-07T16:00:00Z")).toMatchObject({
      allowed: 0,
      source: expect.stringContaining(
        '(schedule "0 12 * * *", duration 8h) active until 2026-12-07T20:00:00Z'
      ),
      until: t("2026-12-07T20:00:00Z")
    })
    expect(bound([BUSINESS_HOURS, noon], "2026-12-07T17:30:00Z").until).toBe(t("2026-12-07T20:00:00Z"))
    expect(bound([BUSINESS_HOURS, noon], "2026-12-07T20:00:00Z").allowed).toBe(2)
  })

  it("an always-active budget as tight as a scheduled one is named (it never lifts by itself)", () => {
    expect(bound([BUSINESS_HOURS, { nodes: "0" }], "2026-12-07T10:00:00Z")).toEqual({
      allowed: 0,
      source: 'nodepool gpu disruption budget "0"'
    })
  })

  it("a looser window does not raise a tighter always-active budget", () => {
    const b = bound(
      [{ nodes: "1" }, { nodes: "5", schedule: "@daily", duration: "24h" }],
      "2026-12-07T10:00:00Z"
    )
    expect(b).toEqual({ allowed: 1, source: 'nodepool gpu disruption budget "1"' })
  })

  it("back-to-back hits make one window: it ends after the last hit", () => {
    const shifts: DisruptionBudget = { nodes: "0", schedule: "0 0,8 * * *", duration: "8h" }
    expect(budgetState(shifts, t("2026-12-07T03:00:00Z"))).toEqual({
      _tag: "Active",
      until: t("2026-12-07T16:00:00Z")
    })
  })

  it("a window that never ends has no end to report", () => {
    expect(
      budgetState({ nodes: "0", schedule: "@hourly", duration: "90m" }, t("2026-12-07T03:00:00Z"))
    ).toEqual({
      _tag: "Active"
    })
  })
})

describe("robfig/cron's macros and rules, in UTC", () => {
  it.each([
    ["@daily", "1h", "2026-12-07T00:30:00Z", "2026-12-07T01:00:00Z"],
    ["@midnight", "1h", "2026-12-07T00:00:00Z", "2026-12-07T01:00:00Z"],
    ["@hourly", "10m", "2026-12-07T05:05:00Z", "2026-12-07T05:10:00Z"],
    ["@weekly", "1h", "2026-12-06T00:30:00Z", "2026-12-06T01:00:00Z"],
    ["@monthly", "2h", "2026-12-01T01:00:00Z", "2026-12-01T02:00:00Z"],
    ["@yearly", "1h30m", "2027-01-01T01:00:00Z", "2027-01-01T01:30:00Z"],
    ["@annually", "1h30m", "2027-01-01T01:00:00Z", "2027-01-01T01:30:00Z"]
  ])("%s for %s: active at %s until %s", (schedule, duration, iso, until) =>
    expect(budgetState({ nodes: "0", schedule, duration }, t(iso))).toEqual({
      _tag: "Active",
      until: t(until)
    })
  )

  it.each([
    ["@daily", "1h", "2026-12-07T01:00:00Z"],
    ["@hourly", "10m", "2026-12-07T05:10:00Z"],
    ["@weekly", "1h", "2026-12-07T00:30:00Z"],
    ["@monthly", "2h", "2026-12-02T01:00:00Z"],
    ["@yearly", "1h", "2026-12-07T00:30:00Z"]
  ])("%s for %s: inactive at %s", (schedule, duration, iso) =>
    expect(budgetState({ nodes: "0", schedule, duration }, t(iso))).toEqual({ _tag: "Inactive" })
  )

  it("the duration as Karpenter writes it back (8h0m0s) is read as 8h", () => {
    expect(
      budgetState({ nodes: "0", schedule: "0 9 * * 1-5", duration: "8h0m0s" }, t("2026-12-07T16:00:00Z"))
    ).toEqual({ _tag: "Active", until: t("2026-12-07T17:00:00Z") })
  })

  it("day of month and day of week match with 'or' unless one is '*' or '?' (robfig, Vixie cron)", () => {
    // Monday 2026-12-14 is an even day: '*/2' days OR Mondays fires (robfig), '*/2 AND Monday' would not.
    const odd: DisruptionBudget = { nodes: "0", schedule: "0 0 */2 * 1", duration: "1h" }
    expect(budgetState(odd, t("2026-12-14T00:30:00Z"))._tag).toBe("Active")
    // '?' is '*': Mondays only.
    const mondays: DisruptionBudget = { nodes: "0", schedule: "0 0 ? * MON", duration: "1h" }
    expect(budgetState(mondays, t("2026-12-14T00:30:00Z"))._tag).toBe("Active")
    expect(budgetState(mondays, t("2026-12-15T00:30:00Z"))._tag).toBe("Inactive")
  })

  it("a schedule that never fires is always active, as robfig's zero time makes it for Karpenter", () => {
    expect(
      budgetState({ nodes: "0", schedule: "0 0 31 2 *", duration: "1h" }, t("2026-12-07T10:00:00Z"))
    ).toEqual({
      _tag: "Active"
    })
  })
})

describe("a budget Karpenter's validation would refuse fails closed, naming it and why", () => {
  it.each<[string, DisruptionBudget, string]>([
    [
      "schedule without duration",
      { nodes: "0", schedule: "0 9 * * 1-5" },
      "'schedule' must be set with 'duration'"
    ],
    ["duration without schedule", { nodes: "0", duration: "8h" }, "'schedule' must be set with 'duration'"],
    ["four fields", { nodes: "0", schedule: "0 9 * *", duration: "8h" }, 'schedule "0 9 * *" is not a cron'],
    ["six fields", { nodes: "0", schedule: "0 0 9 * * 1-5", duration: "8h" }, "expected 5 fields, found 6"],
    [
      "an unknown macro",
      { nodes: "0", schedule: "@wrongly", duration: "8h" },
      'schedule "@wrongly" is not a cron'
    ],
    ["@every", { nodes: "0", schedule: "@every 1h", duration: "8h" }, 'schedule "@every 1h" is not a cron'],
    ["weekday 7", { nodes: "0", schedule: "0 9 * * 1-7", duration: "8h" }, "day of week above 6"],
    ["minute 60", { nodes: "0", schedule: "60 9 * * *", duration: "8h" }, 'schedule "60 9 * * *": '],
    [
      "seconds in duration",
      { nodes: "0", schedule: "@daily", duration: "90s" },
      'duration "90s" is not minutes'
    ],
    ["nodes not a count", { nodes: "ten" }, 'nodes "ten" is not a count or a percentage'],
    ["nodes over 100%", { nodes: "150%" }, 'nodes "150%" is not a count']
  ])("%s", (_, budget, why) => {
    const b = bound([{ nodes: "50%" }, budget], "2026-12-06T12:00:00Z")
    expect(b.allowed).toBe(0)
    expect(b.source).toContain(`nodepool gpu disruption budget "${budget.nodes}"`)
    expect(b.source).toContain(why)
    expect(b.source).toContain("which Karpenter's validation refuses")
  })

  it("an invalid budget of another reason fails repair closed too, as MustGetAllowedDisruptions does", () => {
    const b = nodePoolBound(
      [{ nodes: "10%" }, { nodes: "0", reasons: ["Drifted"], schedule: "@daily" }],
      20,
      0
    )
    expect(b).toMatchObject({ allowed: 0, invalid: "'schedule' must be set with 'duration'" })
  })
})
