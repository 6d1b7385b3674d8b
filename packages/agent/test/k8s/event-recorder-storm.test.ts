// The Event recorder under a storm of one fault (issue #27: 1% soft lockups in 200,000 kernel lines spent the
// kernel monitor's budget, and the `nf_conntrack: table full` seen after them never became an Event). The first
// occurrence of every reason is written at once; a reason's repeats are bounded by its own bucket within the
// monitor's ceiling; what was refused is counted per reason and named in one EventsThrottled summary a minute.
// Virtual time (TestClock); the API is a scripted KubeApi that records every call.
import { describe, expect, it } from "@effect/vitest"
import { EVENTS_THROTTLED_REASON } from "@nodemend/reason-codes"
import { Clock, Effect, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import { eventsThrottledTotal } from "../../src/health/metrics.ts"
import { EventRecorder, eventRecorderLayer, throttledNote } from "../../src/k8s/event-recorder.ts"
import { KubeApi, type NewNodeEvent } from "../../src/k8s/kube-api.ts"
import type { Detection } from "../../src/model.ts"

const detection = (reason: string, message: string, monitor: Detection["monitor"] = "kernel"): Detection => ({
  _tag: "Detection",
  monitor,
  reason,
  conditionType: monitor === "storage" ? "StorageReady" : "KernelReady",
  severity: "Event",
  message,
  observedAtMs: 0
})

type Call =
  | { readonly op: "create"; readonly event: NewNodeEvent; readonly atMs: number }
  | { readonly op: "bump"; readonly name: string; readonly count: number }

const scripted = () => {
  const calls: Call[] = []
  const layer = Layer.succeed(
    KubeApi,
    KubeApi.of({
      nodeName: "n1",
      http: undefined as never,
      readNode: Effect.die("unused"),
      patchConditions: () => Effect.die("unused"),
      bumpEventSeries: (name, count) =>
        Effect.sync(() => {
          calls.push({ op: "bump", name, count })
        }),
      createEvent: (_uid, event) =>
        Effect.map(Clock.currentTimeMillis, (atMs) => {
          calls.push({ op: "create", event, atMs })
          return `ev-${calls.length}`
        })
    })
  )
  const creates = (reason?: string) =>
    calls.flatMap((c) =>
      c.op === "create" && (reason === undefined || c.event.reason === reason) ? [c] : []
    )
  return { calls, creates, layer }
}

/** The agent's default ceiling: 25 at once, then one per 5 minutes; a reason's own bucket holds 13. */
const recorder = (layer: Layer.Layer<KubeApi>) =>
  eventRecorderLayer({
    nodeUid: Effect.succeed("uid"),
    budgetFor: () => ({ burst: 25, refillSeconds: 300 })
  }).pipe(Layer.provide(layer))

/** Lets the recorder's fiber drain its queue without moving the clock. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20_000; i++) yield* Effect.yieldNow
})

const softLockup = (i: number) => detection("SoftLockup", `CPU stuck for ${20 + (i % 40)}s`)
const conntrack = detection("ConntrackExceededKernel", "nf_conntrack: table full, dropping packet")

describe("Event recorder under a storm of one reason (issue #27)", () => {
  it.effect("a different reason after a storm is created at once; the storm's repeats are bounded", () => {
    const api = scripted()
    return Effect.gen(function* () {
      const events = yield* EventRecorder
      const throttledBefore = yield* Metric.value(
        Metric.withAttributes(eventsThrottledTotal, { monitor: "kernel", reason: "SoftLockup" })
      )
      for (let i = 0; i < 2000; i++) yield* events.record(softLockup(i))
      yield* events.record(conntrack)
      yield* settle
      // Not a tick of virtual time later: the conntrack finding is an Event.
      const [created] = api.creates("ConntrackExceededKernel")
      expect(created?.event).toMatchObject({ type: "Warning", note: conntrack.message })
      expect(created?.atMs).toBe(0)
      // The soft lockups: 1 first occurrence + 12 repeats (its own bucket of 13), whatever they were.
      const lockupCalls = api.calls.filter(
        (c) => (c.op === "create" && c.event.reason === "SoftLockup") || c.op === "bump"
      )
      expect(lockupCalls).toHaveLength(13)
      const throttled = yield* Metric.value(
        Metric.withAttributes(eventsThrottledTotal, { monitor: "kernel", reason: "SoftLockup" })
      )
      expect(throttled.count - throttledBefore.count).toBe(2000 - 13)
    }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
  })

  it.effect(
    "a new reason's first occurrence is written ahead of the storm's admitted repeats (issue #39)",
    () => {
      // Each create takes 100 ms of the API server's time: the storm's 13 admitted Events are a 1.3 s backlog.
      const calls: { reason: string; atMs: number }[] = []
      const slow = Layer.succeed(
        KubeApi,
        KubeApi.of({
          nodeName: "n1",
          http: undefined as never,
          readNode: Effect.die("unused"),
          patchConditions: () => Effect.die("unused"),
          bumpEventSeries: () => Effect.sleep("100 millis"),
          createEvent: (_uid, event) =>
            Effect.sleep("100 millis").pipe(
              Effect.andThen(Clock.currentTimeMillis),
              Effect.map((atMs) => {
                calls.push({ reason: event.reason, atMs })
                return `ev-${calls.length}`
              })
            )
        })
      )
      return Effect.gen(function* () {
        const events = yield* EventRecorder
        for (let i = 0; i < 100; i++) yield* events.record(softLockup(i))
        yield* settle
        yield* events.record(conntrack)
        for (let t = 0; t < 20; t++) {
          yield* TestClock.adjust("100 millis")
          yield* settle
        }
        // The soft lockup being written when it came, then the conntrack: not the 14th, 1.4 s on.
        expect(calls.findIndex((c) => c.reason === "ConntrackExceededKernel")).toBe(1)
        expect(calls.find((c) => c.reason === "ConntrackExceededKernel")?.atMs).toBe(200)
        expect(calls.filter((c) => c.reason === "SoftLockup")).toHaveLength(13)
      }).pipe(Effect.provide(recorder(slow)), Effect.scoped)
    }
  )

  it.effect("the storm of one reason leaves the ceiling's other half to the repeats of the others", () => {
    const api = scripted()
    return Effect.gen(function* () {
      const events = yield* EventRecorder
      for (let i = 0; i < 500; i++) yield* events.record(softLockup(i))
      // Conntrack on 20 distinct occasions (distinct messages: each would be its own Event).
      for (let i = 0; i < 20; i++)
        yield* events.record(detection("ConntrackExceededKernel", `nf_conntrack: table full (${i})`))
      yield* settle
      // 25 - 13 spent by the lockups = 12 left in the ceiling for conntrack.
      expect(api.creates("ConntrackExceededKernel")).toHaveLength(12)
    }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
  })

  it.effect(
    "every reason's first occurrence gets through though the ceiling is spent; monitors apart",
    () => {
      const api = scripted()
      return Effect.gen(function* () {
        const events = yield* EventRecorder
        for (const reason of ["SoftLockup", "KernelBug", "AppBlocked"])
          for (let i = 0; i < 300; i++) yield* events.record(detection(reason, `${reason} ${i}`))
        yield* settle
        // SoftLockup 13 (its bucket), KernelBug 12 (what was left of the ceiling), AppBlocked 1 (first, over it).
        expect(api.creates()).toHaveLength(26)
        yield* events.record(conntrack)
        yield* events.record(detection("BlockDeviceIOError", "I/O error on nvme1n1", "storage"))
        yield* settle
        expect(api.creates("AppBlocked")).toHaveLength(1)
        expect(api.creates("ConntrackExceededKernel")).toHaveLength(1)
        expect(api.creates("BlockDeviceIOError")).toHaveLength(1)
      }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
    }
  )

  it.effect("one EventsThrottled summary a minute names per monitor and reason what was refused", () => {
    const api = scripted()
    return Effect.gen(function* () {
      const events = yield* EventRecorder
      for (let i = 0; i < 100; i++) yield* events.record(softLockup(i))
      for (let i = 0; i < 40; i++)
        yield* events.record(detection("BlockDeviceIOError", `I/O error ${i}`, "storage"))
      yield* settle
      expect(api.creates(EVENTS_THROTTLED_REASON)).toHaveLength(0)
      yield* TestClock.adjust("60 seconds")
      const summaries = api.creates(EVENTS_THROTTLED_REASON)
      expect(summaries).toHaveLength(1)
      expect(summaries[0]?.event).toEqual({
        type: "Normal",
        reason: "EventsThrottled",
        action: "Throttled",
        note: "Event budget refused 114 occurrences in the last 60 s (detected and counted; a repeat's count lands in its Event's series at its next update): kernel SoftLockup 87; storage BlockDeviceIOError 27"
      })
      // Nothing refused since: no summary.
      yield* TestClock.adjust("5 minutes")
      expect(api.creates(EVENTS_THROTTLED_REASON)).toHaveLength(1)
      // The storm goes on: a summary for that minute only.
      for (let i = 0; i < 10; i++) yield* events.record(softLockup(i))
      yield* settle
      yield* TestClock.adjust("60 seconds")
      const later = api.creates(EVENTS_THROTTLED_REASON)
      expect(later).toHaveLength(2)
      // One token refilled in the 6 minutes for SoftLockup's bucket (one per 300 s): 9 of 10 refused.
      expect(later[1]?.event.note).toMatch(/refused 9 occurrences in the last 60 s .*: kernel SoftLockup 9$/)
    }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
  })

  it.effect(
    "a refused occurrence is counted when recorded, never queued behind an API server that does not answer",
    () => {
      const calls: string[] = []
      const stuck = Layer.succeed(
        KubeApi,
        KubeApi.of({
          nodeName: "n1",
          http: undefined as never,
          readNode: Effect.die("unused"),
          patchConditions: () => Effect.die("unused"),
          bumpEventSeries: () => Effect.never,
          // The first create never returns: the recorder's fiber is stuck on it for the whole storm.
          createEvent: (_uid, event) =>
            Effect.sync(() => calls.push(event.reason)).pipe(Effect.andThen(Effect.never))
        })
      )
      return Effect.gen(function* () {
        const events = yield* EventRecorder
        const throttled = Metric.withAttributes(eventsThrottledTotal, {
          monitor: "kernel",
          reason: "SoftLockup"
        })
        const before = yield* Metric.value(throttled)
        for (let i = 0; i < 2000; i++) yield* events.record(softLockup(i))
        // No settling: the budget judged each occurrence as it was recorded; the reason's bucket holds 13.
        expect((yield* Metric.value(throttled)).count - before.count).toBe(2000 - 13)
        yield* settle
        expect(calls).toEqual(["SoftLockup"])
      }).pipe(Effect.provide(recorder(stuck)), Effect.scoped)
    }
  )

  it("the summary's note stays within the 1 kB an Event note may hold", () => {
    const many = Array.from({ length: 200 }, (_, i) => ({
      monitor: "nvidia",
      reason: `NvidiaXID${i}Error`,
      count: 1000 - i
    }))
    const note = throttledNote(many, 60)
    expect(note.length).toBeLessThanOrEqual(1024)
    expect(note).toMatch(/nvidia NvidiaXID0Error 1000; .*; and \d+ more reasons$/)
  })
})
