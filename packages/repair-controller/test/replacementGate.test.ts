// The one replacement gate (actions/replacementGate.ts, issue #41): the owner's "up" through the health check, with
// its bound; ReplacementReady only when healthy. Effect with TestClock; the informer's Nodes as a Map.
import { describe, expect, it } from "@effect/vitest"
import type { Node } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { gateReplacement } from "../src/actions/replacementGate.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { EventRecorder } from "../src/kube/EventRecorder.ts"
import { fact } from "../src/repair/outcome.ts"
import { advance, newRepairRecord } from "../src/repair/stateMachine.ts"
import { xid79Match } from "./fixtures.ts"

const config = Result.getOrThrow(decodeConfig({ replacement: { healthTimeoutSeconds: 30, maxAttempts: 3 } }))
const T0 = Date.parse("2026-01-01T00:00:00Z")

const record = (expects = true) =>
  advance(
    advance(
      newRepairRecord(
        {
          id: "r1",
          match: xid79Match(T0, { capacityFirst: true }),
          node: {
            name: "n1",
            uid: "u1",
            providerID: "kwok://n1",
            labels: {},
            instance: { instanceId: "n1", state: "running", launch: {}, owner: { kind: "standalone" } }
          },
          ...(expects
            ? { replacementExpects: { agentConditions: ["AcceleratedHardwareReady"], gpus: 8 } }
            : {})
        },
        T0
      ),
      { _tag: "Tainted" },
      T0
    ),
    { _tag: "ReplacementLaunched", replacement: { nodeName: "n1-r" } },
    T0
  )

const node = (gpuStatus: string | undefined, gpus = "8"): Node => ({
  metadata: { name: "n1-r" },
  status: {
    conditions: [
      { type: "Ready", status: "True" },
      ...(gpuStatus === undefined ? [] : [{ type: "AcceleratedHardwareReady", status: gpuStatus }])
    ],
    capacity: { "nvidia.com/gpu": gpus },
    allocatable: { "nvidia.com/gpu": gpus }
  }
})

type NodeEventInput = Parameters<EventRecorder["emit"]>[0]

const gate = (n: Node | undefined, expects = true, healthTimesOutAt?: number) => {
  const events: NodeEventInput[] = []
  const ports = {
    cache: { get: (name: string) => (name === "n1-r" ? n : undefined), names: () => ["n1-r"] },
    events: {
      emit: (e: NodeEventInput) => Effect.sync(() => void events.push(e)),
      emitNow: (e: NodeEventInput) => Effect.sync(() => void events.push(e)),
      emitDeduped: (_k: string, _t: number, e: NodeEventInput) => Effect.sync(() => void events.push(e))
    },
    config
  }
  const up = fact({ _tag: "ReplacementReady", nodeName: "n1-r", note: "replacement n1-r is Ready" })
  return Effect.map(gateReplacement(ports, record(expects), up, healthTimesOutAt), (out) => ({ out, events }))
}

describe("the replacement gate", () => {
  it.effect("a healthy replacement is capacity: ReplacementReady, with the owner's words", () =>
    Effect.gen(function* () {
      const { out, events } = yield* gate(node("True"))
      expect(out).toEqual(
        fact({ _tag: "ReplacementReady", nodeName: "n1-r", note: "replacement n1-r is Ready" })
      )
      expect(events.map((e) => [e.reason, e.note])).toEqual([
        ["ReplacementReady", "replacement n1-r is Ready"]
      ])
    })
  )

  it.effect("a GPU fault fails it, naming the check; no ReplacementReady", () =>
    Effect.gen(function* () {
      const { out, events } = yield* gate(node("False"))
      expect(out).toEqual(
        fact({
          _tag: "ReplacementUnhealthy",
          nodeName: "n1-r",
          check: "AgentCondition",
          why: "AcceleratedHardwareReady=False",
          attemptsAllowed: 3
        })
      )
      expect(events).toEqual([])
    })
  )

  it.effect(
    "an agent not reported yet waits, journaling the first Ready, until the bound; then Timeout",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 10_000)
        const waiting = yield* gate(node(undefined), true, T0 + 30_000)
        expect(waiting.out).toEqual({ _tag: "Wait", requeueAfterMs: 2000, fact: { _tag: "ReplacementUp" } })
        yield* TestClock.setTime(T0 + 30_000)
        const late = yield* gate(node(undefined), true, T0 + 30_000)
        expect(late.out).toMatchObject({
          _tag: "Fact",
          fact: {
            _tag: "ReplacementUnhealthy",
            check: "Timeout",
            why: "not healthy within 30s of Ready: the agent has not reported AcceleratedHardwareReady"
          }
        })
      })
  )

  it.effect("a record from before the gate: Ready is enough", () =>
    Effect.gen(function* () {
      const { out } = yield* gate(node("False", "0"), false)
      expect(out).toMatchObject({ _tag: "Fact", fact: { _tag: "ReplacementReady" } })
    })
  )
})
