// The scenario's order checks (src/checks.mjs), on Events as one list call returns them.
import { describe, expect, it } from "vitest"
import {
  capacityFirstViolation,
  eventMicros,
  firstInFlightExcess,
  microsOf,
  whatIfMismatch
} from "../src/checks.mjs"

const at = (time) => microsOf(`2026-12-01T22:34:${time}Z`)
const ev = (node, reason, time) => ({ node, reason, at: at(time) })

describe("microsOf / eventMicros", () => {
  it("keeps microseconds and reads the time an Event happened, eventTime first", () => {
    expect(microsOf("2026-12-01T22:34:49.500123Z") - microsOf("2026-12-01T22:34:49.500000Z")).toBe(123)
    expect(microsOf("2026-12-01T22:34:49Z")).toBe(Date.parse("2026-12-01T22:34:49Z") * 1000)
    expect(microsOf("2026-12-01T22:34:49.5+01:00")).toBe(Date.parse("2026-12-01T21:34:49.5Z") * 1000)
    expect(microsOf(new Date("2026-12-01T22:34:49.5Z"))).toBe(Date.parse("2026-12-01T22:34:49.5Z") * 1000)
    expect(microsOf(new Date("yesterday"))).toBeUndefined()
    expect(microsOf("yesterday")).toBeUndefined()
    expect(microsOf(undefined)).toBeUndefined()
    const e = {
      eventTime: "2026-12-01T22:34:49.508000Z",
      firstTimestamp: "2026-12-01T22:34:40Z",
      metadata: { creationTimestamp: "2026-12-01T22:34:50Z" }
    }
    expect(eventMicros(e)).toBe(at("49.508"))
    expect(eventMicros({ ...e, eventTime: null })).toBe(at("40"))
    // As client-node returns it: eventTime a string, the metav1.Time fields Dates.
    expect(eventMicros({ eventTime: null, firstTimestamp: new Date("2026-12-01T22:34:41Z") })).toBe(at("41"))
  })
})

describe("firstInFlightExcess (maxInFlight 2)", () => {
  // The run that failed the old two-read probe: 138-241 succeeded at .500, 2-98 started at .508.
  const first = [ev("a", "RepairStarted", "30.100"), ev("b", "RepairStarted", "30.200")]
  it("a success and the next start 8 ms apart, listed in any order: never more than 2 in flight", () => {
    const events = [
      ev("c", "RepairStarted", "49.508"),
      ...first,
      ev("a", "RepairSucceeded", "49.500"),
      ev("b", "RepairSucceeded", "52.000"),
      ev("d", "RepairStarted", "52.001")
    ]
    expect(firstInFlightExcess(events, 2)).toBeUndefined()
    expect(firstInFlightExcess([...events].reverse(), 2)).toBeUndefined()
  })
  it("a success and the next start in the same millisecond: the slot is given back first", () => {
    const events = [...first, ev("c", "RepairStarted", "49.500"), ev("a", "RepairSucceeded", "49.500")]
    expect(firstInFlightExcess(events, 2)).toBeUndefined()
  })
  it("a third repair started 1 ms before either of the first two ended: too many", () => {
    const events = [
      ...first,
      ev("c", "RepairStarted", "49.499"),
      ev("a", "RepairSucceeded", "49.500"),
      ev("b", "RepairSucceeded", "52.000")
    ]
    expect(firstInFlightExcess(events, 2)).toEqual({ node: "c", at: at("49.499"), inFlight: ["a", "b", "c"] })
  })
  it("a failed repair frees its slot too; other reasons do not count", () => {
    const events = [
      ...first,
      ev("a", "RepairFailed", "40.000"),
      ev("c", "RepairStarted", "41.000"),
      ev("d", "RepairQueued", "35.000"),
      ev("d", "ReplacementReady", "36.000")
    ]
    expect(firstInFlightExcess(events, 2)).toBeUndefined()
    expect(firstInFlightExcess(events, 1)).toMatchObject({ node: "b", inFlight: ["a", "b"] })
  })
})

describe("capacityFirstViolation", () => {
  const record = { order: "capacityFirst", drainStartedAt: "2026-12-01T22:34:45.000Z" }
  it("passes when the replacement was Ready at or before the drain began", () => {
    expect(capacityFirstViolation({ node: "a", record, replacementReadyAt: at("44.999") })).toBeUndefined()
    expect(capacityFirstViolation({ node: "a", record, replacementReadyAt: at("45.000") })).toBeUndefined()
  })
  it("fails a drain before the replacement was Ready, a fallback, remove first, or nothing seen", () => {
    expect(capacityFirstViolation({ node: "a", record, replacementReadyAt: at("45.001") })).toMatch(
      /a: drain began at .*, 1 ms before its replacement was Ready/
    )
    expect(
      capacityFirstViolation({
        node: "a",
        record: { ...record, fallback: "no capacity" },
        replacementReadyAt: 0
      })
    ).toMatch(/fell back/)
    expect(
      capacityFirstViolation({
        node: "a",
        record: { ...record, order: "removeFirst" },
        replacementReadyAt: 0
      })
    ).toMatch(/removeFirst, not capacity first/)
    expect(capacityFirstViolation({ node: "a", record, replacementReadyAt: undefined })).toMatch(
      /no ReplacementReady/
    )
    expect(capacityFirstViolation({ node: "a", record: undefined, replacementReadyAt: 0 })).toMatch(
      /no journal record/
    )
  })
})

describe("whatIfMismatch", () => {
  const us = (iso) => Date.parse(iso) * 1000
  const live = [
    { node: "a", at: us("2026-12-02T10:00:10Z") },
    { node: "b", at: us("2026-12-02T10:00:11Z") },
    { node: "c", at: us("2026-12-02T10:01:00Z") },
    { node: "s", at: us("2026-12-02T10:05:00Z") }
  ]
  const replayed = {
    repairs: [
      { node: "a", startedAt: "2026-12-02T10:00:12Z" },
      { node: "b", startedAt: "2026-12-02T10:00:12Z" },
      { node: "s", startedAt: "2026-12-02T10:04:00Z" }
    ],
    // c waited for a slot in the replay and was deleted by the controller's repair: repaired by both.
    holds: [{ node: "c", cause: "budget", outcome: "deleted" }]
  }
  const args = { live, replayed, shifted: "s", toleranceMs: 10_000 }

  it("accepts the same repairs at the same times, a budget race and the shifted node started sooner", () => {
    expect(whatIfMismatch(args)).toBeUndefined()
  })

  it("names a node only one of them repaired", () => {
    expect(whatIfMismatch({ ...args, live: live.filter((l) => l.node !== "b") })).toMatch(
      /only in the replay: \[b\]/
    )
    const held = { ...replayed, holds: [{ node: "c", cause: "budget", outcome: "started" }] }
    expect(whatIfMismatch({ ...args, replayed: held })).toMatch(/only by the controller: \[c\]/)
  })

  it("refuses the shifted node started later by the replay, and starts further apart than the tolerance", () => {
    const late = {
      ...replayed,
      repairs: replayed.repairs.map((r) => (r.node === "s" ? { ...r, startedAt: "2026-12-02T10:06:00Z" } : r))
    }
    expect(whatIfMismatch({ ...args, replayed: late })).toMatch(/s: the replay started it after/)
    expect(whatIfMismatch({ ...args, toleranceMs: 1_000 })).toMatch(/repair start 1: .*\(2.0 s apart\)/)
  })
})
