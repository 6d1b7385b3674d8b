// Planned repairs for EC2 scheduled events (#42): the pure planner (decide/scheduledEvents.ts) and its plan as one
// more match of decide(): timing (NotBefore - lead), maintenance windows, completed/cancelled events, and the gates
// and budgets it goes through like any due repair. No cluster; TestClock for time.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decideNow } from "../src/decide/decide.ts"
import { fitWindow, planFor, plannedMatch, planSettings } from "../src/decide/scheduledEvents.ts"
import type { ScheduledEvent } from "../src/domain/Instance.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { kwokScheduledEvents } from "../src/cloud/kwok/KwokCloudProvider.ts"
import { node } from "./fixtures.ts"

const HOUR = 3_600_000
const MIN = 60_000
// A Monday.
const T0 = Date.parse("2026-12-07T00:00:00Z")
const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const event = (over: Partial<ScheduledEvent> = {}): ScheduledEvent => ({
  id: "instance-event-0123456789abcdef0",
  code: "instance-retirement",
  description: "The instance is running on degraded hardware",
  notBefore: T0 + 48 * HOUR,
  notAfter: T0 + 50 * HOUR,
  ...over
})
const LEAD = { leadMs: 2 * HOUR }

describe("timing", () => {
  it("a retirement is due its lead before NotBefore, with its reason code", () => {
    const p = planFor([event()], LEAD, T0)
    expect(p).toMatchObject({
      reason: "EC2InstanceRetirementScheduled",
      deadline: T0 + 46 * HOUR,
      dueAt: T0 + 46 * HOUR,
      window: { _tag: "NoWindow" }
    })
  })

  it.each([
    ["instance-retirement", "EC2InstanceRetirementScheduled", "Replace"],
    ["instance-stop", "EC2InstanceStopScheduled", "Replace"],
    ["system-reboot", "EC2SystemRebootScheduled", "Reboot"],
    ["instance-reboot", "EC2InstanceRebootScheduled", "Reboot"],
    ["system-maintenance", "EC2SystemMaintenanceScheduled", "None"]
  ] as const)("%s -> %s, %s (capacity first by default)", (code, reason, action) => {
    const p = planFor([event({ code })], LEAD, T0)!
    const m = plannedMatch(config(), p)
    expect([m.conditionType, m.reason, m.action, m.capacityFirst]).toEqual([
      "EC2ScheduledEvent",
      reason,
      action,
      true
    ])
    expect(m.expiresAt).toBe(T0 + 46 * HOUR)
  })

  it("an event already inside its lead is due at once; the first event EC2 acts on governs", () => {
    const soon = event({ id: "soon", code: "system-reboot", notBefore: T0 + 30 * MIN })
    const p = planFor([event(), soon], LEAD, T0)!
    expect(p.event.id).toBe("soon")
    expect(p.dueAt).toBeLessThan(T0)
  })

  it("a reasons.<reason> override sets the action and the drain", () => {
    const c = config({
      reasons: { EC2SystemRebootScheduled: { action: "Replace", drainDeadlineSeconds: 60 } }
    })
    const m = plannedMatch(c, planFor([event({ code: "system-reboot" })], LEAD, T0)!)
    expect([m.action, m.drainDeadlineMs, m.actionSource]).toEqual(["Replace", 60_000, "reason-override"])
  })
})

describe("maintenance windows (UTC cron + duration, as NodePool budgets)", () => {
  const nightly = { schedule: "0 2 * * *", duration: "4h" }

  it("due at the opening of the last window before the deadline", () => {
    // deadline Tuesday 22:00 -> Tuesday 02:00's window.
    const r = fitWindow(T0 + 46 * HOUR, nightly, T0)
    expect(r).toEqual({
      dueAt: T0 + 26 * HOUR,
      window: { _tag: "Inside", opens: T0 + 26 * HOUR, closes: T0 + 30 * HOUR }
    })
  })

  it("inside the window now: due now (the opening is past)", () => {
    const r = fitWindow(T0 + 3 * HOUR, nightly, T0 + 3 * HOUR - MIN)
    expect(r.window._tag).toBe("Inside")
    expect(r.dueAt).toBe(T0 + 2 * HOUR)
  })

  it("no window opens before the deadline: due at the deadline all the same (EC2 acts then)", () => {
    const r = fitWindow(T0 + 20 * HOUR, nightly, T0 + 7 * HOUR)
    expect(r).toEqual({ dueAt: T0 + 20 * HOUR, window: { _tag: "NoneBeforeDeadline" } })
  })

  it("per pool: only the pool's window applies; an invalid window is refused by the config", () => {
    const c = config({ scheduledEvents: { leadSeconds: 3600, maintenanceWindows: { gpu: nightly } } })
    expect(planSettings(c, "gpu")).toEqual({ leadMs: HOUR, window: nightly })
    expect(planSettings(c, "cpu")).toEqual({ leadMs: HOUR })
    const bad = decodeConfig({
      scheduledEvents: { maintenanceWindows: { gpu: { schedule: "0 2 * *", duration: "4h" } } }
    })
    expect(Result.isFailure(bad)).toBe(true)
    if (Result.isFailure(bad)) expect(bad.failure.message).toContain("scheduledEvents.maintenanceWindows.gpu")
  })
})

describe("cancellation", () => {
  it.each(["completed", "canceled"] as const)("a %s event plans nothing", (ended) => {
    expect(planFor([event({ ended })], LEAD, T0)).toBeUndefined()
  })

  it("an event past its NotAfter plans nothing; a live one beside an ended one still does", () => {
    expect(planFor([event()], LEAD, T0 + 51 * HOUR)).toBeUndefined()
    const p = planFor([event({ id: "old", ended: "canceled", notBefore: T0 }), event()], LEAD, T0)
    expect(p?.event.id).toBe("instance-event-0123456789abcdef0")
  })
})

describe("through decide's gates", () => {
  const c = config({ maxUnhealthyPercent: 100, maxInFlight: "1" })
  const healthy = (name: string) => node(name, [], { pool: "p" })
  const statsOf = (all: ReadonlyArray<NodeView>, repairing: ReadonlyArray<string> = []) => {
    const counter = makePoolCounter(c)
    for (const n of all) counter.upsert(n)
    for (const n of repairing) counter.setRepair(n, { pool: "p", zone: undefined, failed: false })
    return counter.stats()
  }
  const retiring = healthy("retiring")
  const fleet = [retiring, ...["a", "b", "c"].map(healthy)]
  const planned = plannedMatch(c, planFor([event()], LEAD, T0)!)
  const decideAt = (t: number, over: Partial<Parameters<typeof decideNow>[0]> = {}) =>
    TestClock.setTime(t).pipe(
      Effect.andThen(
        decideNow({
          config: c,
          node: retiring,
          stats: statsOf(fleet),
          shifts: { _tag: "Known", shifts: [] },
          planned,
          ...over
        })
      )
    )

  it.effect("before its due time it waits (woken at the due time); then it is repaired", () =>
    Effect.gen(function* () {
      const before = yield* decideAt(T0)
      expect(before._tag).toBe("Tolerating")
      if (before._tag === "Tolerating") expect(before.requeueAfterMs).toBe(46 * HOUR)
      const due = yield* decideAt(T0 + 46 * HOUR)
      expect(due._tag).toBe("Repair")
      if (due._tag === "Repair")
        expect([due.governing.reason, due.governing.action]).toEqual([
          "EC2InstanceRetirementScheduled",
          "Replace"
        ])
    })
  )

  it.effect("a spent in-flight budget holds it (Queued), as it holds a condition's repair", () =>
    Effect.gen(function* () {
      const d = yield* decideAt(T0 + 46 * HOUR, { stats: statsOf(fleet, ["a"]) })
      expect(d._tag).toBe("Queued")
      if (d._tag === "Queued") expect(d.budget.allowed).toBe(1)
    })
  )

  it.effect("vetoed by do-not-repair; dry-run only says it would", () =>
    Effect.gen(function* () {
      const vetoed = node("retiring", [], { pool: "p", annotations: { "nodemend.io/do-not-repair": "true" } })
      expect((yield* decideAt(T0 + 46 * HOUR, { node: vetoed }))._tag).toBe("Vetoed")
      const dry = yield* decideAt(T0 + 46 * HOUR, {
        config: config({ dryRun: true, maxUnhealthyPercent: 100 })
      })
      expect(dry._tag).toBe("WouldRepair")
    })
  )

  it.effect("without the plan (the event cancelled) the node is healthy", () =>
    Effect.gen(function* () {
      const d = yield* decideAt(T0 + 46 * HOUR, { planned: undefined })
      expect(d._tag).toBe("Healthy")
    })
  )
})

describe("kwok provider: events from its ConfigMap (data.events), not from the Node", () => {
  it("the asked Nodes' events, ended ones marked; a bad ConfigMap is an error", () => {
    const text = JSON.stringify([
      { node: "n1", id: "e1", code: "instance-retirement", notBefore: "2026-12-09T00:00:00Z" },
      { node: "n1", id: "e2", code: "system-reboot", notBefore: "2026-12-08T00:00:00Z", ended: "canceled" },
      { node: "other", id: "e3", code: "instance-stop", notBefore: "2026-12-08T00:00:00Z" }
    ])
    const r = Result.getOrThrow(kwokScheduledEvents(text, [{ name: "n1" }]))
    expect([...r.keys()]).toEqual(["n1"])
    expect(r.get("n1")?.map((e) => [e.id, e.ended])).toEqual([
      ["e1", undefined],
      ["e2", "canceled"]
    ])
    expect(Result.isFailure(kwokScheduledEvents('[{"node":"n1","code":"reboot"}]', [{ name: "n1" }]))).toBe(
      true
    )
    expect(Result.getOrThrow(kwokScheduledEvents(undefined, [{ name: "n1" }])).size).toBe(0)
  })
})
