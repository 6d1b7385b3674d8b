// The Event that names what a log storm shed (issue #39): once a minute, only when something was shed, on
// virtual time (TestClock); the API is a scripted KubeApi that records every create.
import { describe, expect, it } from "@effect/vitest"
import { EVENTS_THROTTLED_REASON } from "@nodemend/reason-codes"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { KubeApi, type NewNodeEvent } from "../../src/k8s/kube-api.ts"
import { reportShedFindings, shedNote } from "../../src/k8s/shed-events.ts"
import { makeFindingLanes } from "../../src/sources/finding-lanes.ts"
import type { Finding } from "../../src/model.ts"

const scripted = () => {
  const creates: { event: NewNodeEvent; atMs: number }[] = []
  const layer = Layer.succeed(
    KubeApi,
    KubeApi.of({
      nodeName: "n1",
      http: undefined as never,
      readNode: Effect.die("unused"),
      patchConditions: () => Effect.die("unused"),
      bumpEventSeries: () => Effect.die("unused"),
      createEvent: (_uid, event) =>
        Effect.map(Clock.currentTimeMillis, (atMs) => {
          creates.push({ event, atMs })
          return `ev-${creates.length}`
        })
    })
  )
  return { creates, layer }
}

const lockup: Finding = {
  _tag: "Detection",
  monitor: "kernel",
  reason: "SoftLockup",
  conditionType: "KernelReady",
  severity: "Event",
  message: "CPU#9 stuck",
  observedAtMs: 0,
  subject: "cpu9"
}

describe("shed findings Event (issue #39)", () => {
  it.effect("names each storm's shed count once a minute, and nothing when nothing was shed", () => {
    const api = scripted()
    const lanes = makeFindingLanes({ repeatsPerSource: 1 })
    const storm = (n: number) => {
      for (let i = 0; i < n; i++) lanes.offer("dmesg", lockup, 0)
    }
    return Effect.gen(function* () {
      yield* Effect.forkScoped(
        reportShedFindings({ drainShed: lanes.drainShed, nodeUid: Effect.succeed("uid") })
      )
      yield* Effect.yieldNow
      storm(102) // news, one queued, 100 shed
      yield* TestClock.adjust("30 seconds")
      storm(50)
      expect(api.creates).toHaveLength(0)
      yield* TestClock.adjust("30 seconds")
      expect(api.creates).toHaveLength(1)
      const [first] = api.creates
      expect(first!.atMs).toBe(60_000)
      expect(first!.event).toMatchObject({ type: "Normal", reason: EVENTS_THROTTLED_REASON, action: "Shed" })
      expect(first!.event.note).toContain("a storm of kernel SoftLockup on dmesg shed 150 findings")
      expect(first!.event.note).toContain("in the last 60 s")
      // A quiet minute: no Event.
      yield* TestClock.adjust("60 seconds")
      expect(api.creates).toHaveLength(1)
      storm(7)
      yield* TestClock.adjust("60 seconds")
      expect(api.creates).toHaveLength(2)
      expect(api.creates[1]!.event.note).toContain("shed 7 findings")
    }).pipe(Effect.provide(api.layer), Effect.scoped)
  })

  it("keeps the note within 1 kB, most first", () => {
    const many = Array.from({ length: 60 }, (_, i) => ({
      source: "dmesg" as const,
      monitor: "kernel",
      reason: `Reason${i}`,
      count: 1000 - i
    }))
    const note = shedNote(many, 60)
    expect(note.length).toBeLessThanOrEqual(1024)
    expect(note).toContain("a storm of kernel Reason0 on dmesg shed 1000 findings; a storm of kernel Reason1")
    expect(note).toMatch(/; and \d+ more storms$/)
  })
})
