// The what-if history's scheduled events (#42): the format carries them (bad lines named), and the replay plans them
// with the controller's own planner (decide/scheduledEvents.ts nodePlan) through decide's gates: timing before
// NotBefore, cancellation, a budget that holds the plan, a maintenance window, and a plan acted on once.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { type HistoryLine, historyLine, isoTime, parseHistory } from "../src/whatif/history.ts"
import { replay } from "../src/whatif/replay.ts"
import type { ReplayOptions } from "../src/whatif/result.ts"
import { MIN } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
/** The controller run over a recording (whatif/replay.ts). */
const run = (c: ControllerConfig, events: Parameters<typeof replay>[1], options?: ReplayOptions) =>
  Effect.runPromise(replay(c, events, options))
// A Monday, 00:00 UTC.
const T0 = Date.parse("2026-12-07T00:00:00Z")
const at = (min: number) => isoTime(T0 + min * MIN)
/** A time as whole minutes after T0 (the controller acts a second or two after an instant). */
const m = (t: number) => Math.round((t - T0) / MIN)

const history = (lines: ReadonlyArray<HistoryLine>, endMin: number) => {
  const text = [
    historyLine({ v: 1, kind: "mark", at: at(0), mark: "start" }),
    ...Array.from({ length: 10 }, (_, i) =>
      historyLine({ v: 1, kind: "node", at: at(0), node: `n${i}`, pool: "gpu", zone: "a" })
    ),
    ...lines.map(historyLine),
    historyLine({ v: 1, kind: "mark", at: at(endMin), mark: "end" })
  ].join("\n")
  const parsed = parseHistory(text)
  expect(parsed.bad).toEqual([])
  return parsed.events
}

const scheduled = (
  node: string,
  min: number,
  notBeforeMin: number,
  over: Partial<Extract<HistoryLine, { kind: "scheduledEvent" }>> = {}
): HistoryLine => ({
  v: 1,
  kind: "scheduledEvent",
  at: at(min),
  node,
  id: `instance-event-${node}`,
  code: "instance-retirement",
  notBefore: at(notBeforeMin),
  notAfter: at(notBeforeMin + 120),
  ...over
})

describe("whatif: scheduled events in the history format", () => {
  it("reads a scheduledEvent line", () => {
    const p = parseHistory(historyLine(scheduled("n1", 0, 300, { state: "canceled" })))
    expect(p.bad).toEqual([])
    expect(p.events[0]).toMatchObject({
      kind: "scheduledEvent",
      code: "instance-retirement",
      state: "canceled"
    })
  })

  it("names the line and the field of a bad one, and keeps the others", () => {
    const good = historyLine(scheduled("n1", 0, 300))
    const p = parseHistory(
      [
        good,
        JSON.stringify({ ...scheduled("n2", 0, 300), code: "instance-explode" }),
        JSON.stringify({ ...scheduled("n3", 0, 300), notAfter: at(100) }),
        JSON.stringify({ v: 1, kind: "scheduledEvent", at: at(0), node: "n4", code: "instance-stop" })
      ].join("\n")
    )
    expect(p.events.map((e) => e.line)).toEqual([1])
    expect(p.bad.map((b) => b.line)).toEqual([2, 3, 4])
    expect(p.bad[0]!.error).toMatch(/^code: /)
    expect(p.bad[1]!.error).toBe(`notAfter: ${at(100)} is before notBefore ${at(300)}`)
    expect(p.bad[2]!.error).toMatch(/id: .*notBefore: /s)
  })
})

describe("whatif: the replay plans scheduled events as the controller does", () => {
  it("replaces a retiring node its lead (2h) before NotBefore, and is done before NotBefore", async () => {
    const r = await run(config(), history([scheduled("n1", 10, 300)], 360))
    expect(r.repairs).toEqual([
      expect.objectContaining({
        node: "n1",
        conditionType: "EC2ScheduledEvent",
        reason: "EC2InstanceRetirementScheduled",
        action: "Replace",
        dueAt: T0 + 180 * MIN,
        startedAt: T0 + 180 * MIN,
        dryRun: false
      })
    ])
    expect(r.repairs[0]!.endsAt).toBeLessThan(T0 + 300 * MIN)
    expect(r.holds).toEqual([])
  })

  it("a cancelled event plans nothing", async () => {
    const cancelled = scheduled("n1", 60, 300, { state: "canceled" })
    const r = await run(config(), history([scheduled("n1", 10, 300), cancelled], 360))
    expect(r.repairs).toEqual([])
    expect(r.holds).toEqual([])
  })

  it("a budget holds the plan until the repair in flight ends, then it starts (still before NotBefore)", async () => {
    // maxInFlight 1: n0's repair (Ready=False at 0, due at 30, its replacement 120 min to join, within the
    // replacement timeout here) holds the slot until minute 150.
    const notReady = {
      v: 1,
      kind: "condition",
      at: at(0),
      node: "n0",
      type: "Ready",
      status: "False",
      reason: "KubeletNotReady"
    } as const
    const r = await run(
      config({ maxInFlight: "1", replacement: { timeoutSeconds: 3 * 3600 } }),
      history([notReady, scheduled("n1", 10, 200)], 300),
      { repairDurationMs: 120 * MIN }
    )
    expect(r.repairs.map((x) => [x.node, x.reason, m(x.startedAt)])).toEqual([
      ["n0", "KubeletNotReady", 30],
      ["n1", "EC2InstanceRetirementScheduled", 150]
    ])
    expect(
      r.holds.map((h) => [h.node, h.conditionType, h.reason, h.cause, m(h.from), m(h.to), h.outcome])
    ).toEqual([["n1", "EC2ScheduledEvent", "EC2InstanceRetirementScheduled", "budget", 80, 150, "started"]])
  })

  it("starts at the opening of the pool's last maintenance window before the deadline", async () => {
    // Windows open daily at 01:00 for 2h; NotBefore Tuesday 06:00, lead 2h: deadline 04:00, due Tuesday 01:00.
    const c = config({
      scheduledEvents: { maintenanceWindows: { gpu: { schedule: "0 1 * * *", duration: "2h" } } }
    })
    const r = await run(c, history([scheduled("n1", 10, 30 * 60)], 26 * 60))
    expect(r.repairs.map((x) => [x.node, x.startedAt])).toEqual([["n1", T0 + 25 * 60 * MIN]])
  })

  it("reboots once for a system-reboot that EC2 keeps listing after the repair (its event is acted on)", async () => {
    const reboot = scheduled("n1", 10, 300, { code: "system-reboot" })
    const r = await run(config(), history([reboot], 8 * 60))
    expect(r.repairs.map((x) => [x.node, x.action, x.startedAt])).toEqual([["n1", "Reboot", T0 + 180 * MIN]])
  })

  it("plans nothing while scheduledEvents.enabled is off", async () => {
    const r = await run(
      config({ scheduledEvents: { enabled: false } }),
      history([scheduled("n1", 10, 300)], 360)
    )
    expect(r.repairs).toEqual([])
  })
})
