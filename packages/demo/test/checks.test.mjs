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
  const us = (iso) => Date.parse(`2026-12-02T10:${iso}Z`) * 1000
  // The breaker story of a CI run: four due at once, two slots. The controller took q1 and q2 first and queued q3
  // and q4; the replay took q3 and q1 first, held q2 (deleted by the controller's repair) and q4.
  const live = [
    { node: "q1", at: us("00:07.030") },
    { node: "q2", at: us("00:07.018") },
    { node: "q3", at: us("00:30.618") },
    { node: "q4", at: us("00:30.650") },
    { node: "xid", at: us("00:13.027") },
    { node: "s", at: us("02:13.430") }
  ]
  const replayed = {
    repairs: [
      { node: "q3", startedAt: "2026-12-02T10:00:07Z" },
      { node: "q1", startedAt: "2026-12-02T10:00:07Z" },
      { node: "xid", startedAt: "2026-12-02T10:00:13Z" },
      { node: "q4", startedAt: "2026-12-02T10:00:28.656Z" },
      { node: "s", startedAt: "2026-12-02T10:01:53Z" }
    ],
    holds: [
      { node: "q2", cause: "budget", outcome: "deleted" },
      { node: "q4", cause: "budget", outcome: "started" },
      { node: "v", cause: "veto", outcome: "still held" }
    ]
  }
  const args = { live, queuedLive: ["q3", "q4"], replayed, shifted: "s", toleranceMs: 15_000 }

  it("accepts the same repairs, the slot race judged as a group, the shifted node started sooner", () => {
    expect(whatIfMismatch(args)).toBeUndefined()
  })

  it("judged node by node, the race would not pass (what the first version of the check did)", () => {
    expect(whatIfMismatch({ ...args, queuedLive: [] })).toMatch(
      /q3: the controller started it at .*23.6 s apart/
    )
  })

  it("names a node only one of them repaired", () => {
    expect(whatIfMismatch({ ...args, live: live.filter((l) => l.node !== "xid") })).toMatch(
      /only in the replay: \[xid\]/
    )
    const held = {
      ...replayed,
      holds: replayed.holds.map((h) => (h.node === "q2" ? { ...h, outcome: "started" } : h))
    }
    expect(whatIfMismatch({ ...args, replayed: held })).toMatch(/only by the controller: \[q2\]/)
  })

  it("refuses the shifted node started later by the replay, and starts further apart than the tolerance", () => {
    const late = {
      ...replayed,
      repairs: replayed.repairs.map((r) => (r.node === "s" ? { ...r, startedAt: "2026-12-02T10:03:00Z" } : r))
    }
    expect(whatIfMismatch({ ...args, replayed: late })).toMatch(/s: the replay started it after/)
    const slowXid = { ...args, live: live.map((l) => (l.node === "xid" ? { ...l, at: us("00:40") } : l)) }
    expect(whatIfMismatch(slowXid)).toMatch(/xid: the controller started it at .*\(27.0 s apart\)/)
    expect(whatIfMismatch({ ...args, toleranceMs: 1_000 })).toMatch(/start 2 of the nodes due together/)
  })
})
