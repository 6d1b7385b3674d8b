// The Event recorder while the API server is away (issue #17, found by the agent's API-restart trials: an Event
// raised during the outage was lost). A transient failure (no answer, 429, 5xx) is retried with backoff for up to
// the aggregation window; a refusal (4xx) is not. Virtual time (TestClock); the API is a scripted KubeApi.
import { describe, expect, it } from "@effect/vitest"
import { KubeError } from "@nodemend/kube-access"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { EventRecorder, eventRecorderLayer } from "../../src/k8s/event-recorder.ts"
import { KubeApi } from "../../src/k8s/kube-api.ts"
import type { Detection } from "../../src/model.ts"

const detection: Detection = {
  _tag: "Detection",
  monitor: "kernel",
  reason: "SoftLockup",
  conditionType: "KernelReady",
  severity: "Event",
  message: "CPU#6 stuck for 23s",
  observedAtMs: 0
}

/** A KubeApi whose createEvent fails with `code` for the first `failures` calls; the calls it saw. */
const scripted = (failures: number, code: number | undefined) => {
  const calls: Array<string> = []
  const layer = Layer.succeed(
    KubeApi,
    KubeApi.of({
      nodeName: "n1",
      http: undefined as never,
      readNode: Effect.die("unused"),
      patchConditions: () => Effect.die("unused"),
      bumpEventSeries: () => Effect.void,
      createEvent: (_uid, e) =>
        Effect.suspend(() => {
          calls.push(e.reason)
          return calls.length <= failures
            ? Effect.fail(
                new KubeError({ operation: "create event", code, reason: undefined, message: "down" })
              )
            : Effect.succeed(`ev-${calls.length}`)
        })
    })
  )
  return { calls, layer }
}

const recorder = (layer: Layer.Layer<KubeApi>) =>
  eventRecorderLayer({
    nodeUid: Effect.succeed("uid"),
    budgetFor: () => ({ burst: 10, refillSeconds: 1 })
  }).pipe(Layer.provide(layer))

describe("Event recorder across an API outage", () => {
  it.effect("an Event raised while the API server is away lands when it is back", () => {
    const api = scripted(6, undefined)
    return Effect.gen(function* () {
      const events = yield* EventRecorder
      yield* events.record(detection)
      // 0.5 + 1 + 2 + 4 + 8 + 16 s of backoff: the seventh attempt succeeds.
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("1 second")
      expect(api.calls).toHaveLength(7)
    }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
  })

  it.effect("a refusal (422) is not retried", () => {
    const api = scripted(1, 422)
    return Effect.gen(function* () {
      const events = yield* EventRecorder
      yield* events.record(detection)
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("1 second")
      expect(api.calls).toHaveLength(1)
    }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
  })

  it.effect(
    "an outage longer than the aggregation window gives up (bounded), and the recorder goes on",
    () => {
      const api = scripted(1_000, 503)
      return Effect.gen(function* () {
        const events = yield* EventRecorder
        yield* events.record(detection)
        yield* TestClock.adjust("11 minutes")
        const tried = api.calls.length
        expect(tried).toBeGreaterThan(5)
        expect(tried).toBeLessThan(40)
        yield* TestClock.adjust("1 hour")
        expect(api.calls.length).toBe(tried)
      }).pipe(Effect.provide(recorder(api.layer)), Effect.scoped)
    }
  )
})
