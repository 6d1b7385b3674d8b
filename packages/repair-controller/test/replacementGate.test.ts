// The one replacement gate (actions/replacementGate.ts, issue #41): the owner's "up" through the health check, with
// its bound; ReplacementReady only when healthy. Effect with TestClock; the informer's Nodes as a Map.
import { describe, expect, it } from "@effect/vitest"
import type { Node } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { gateReplacement } from "../src/actions/replacementGate.ts"
import { CloudError, type CloudProvider, type PromisedGpus } from "../src/cloud/CloudProvider.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { EventRecorder } from "../src/kube/EventRecorder.ts"
import { fact } from "../src/repair/outcome.ts"
import { advance, newRepairRecord } from "../src/repair/stateMachine.ts"
import { xid79Match } from "./fixtures.ts"

const config = Result.getOrThrow(decodeConfig({ replacement: { healthTimeoutSeconds: 30, maxAttempts: 3 } }))
const T0 = Date.parse("2026-01-01T00:00:00Z")

const record = (expects = true, gpus = 8) =>
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
          ...(expects ? { replacementExpects: { agentConditions: ["AcceleratedHardwareReady"], gpus } } : {})
        },
        T0
      ),
      { _tag: "Tainted" },
      T0
    ),
    { _tag: "ReplacementLaunched", replacement: { nodeName: "n1-r" } },
    T0
  )

const node = (gpuStatus: string | undefined, gpus = "8", allocatable = gpus, ready = "True"): Node => ({
  metadata: { name: "n1-r" },
  status: {
    conditions: [
      { type: "Ready", status: ready },
      ...(gpuStatus === undefined ? [] : [{ type: "AcceleratedHardwareReady", status: gpuStatus }])
    ],
    capacity: { "nvidia.com/gpu": gpus },
    allocatable: { "nvidia.com/gpu": allocatable }
  }
})

type NodeEventInput = Parameters<EventRecorder["emit"]>[0]

const gate = (
  n: Node | undefined,
  expects = true,
  healthTimesOutAt?: number,
  cloud: Pick<CloudProvider["Service"], "promisedGpus"> = {},
  r = record(expects)
) => {
  const events: NodeEventInput[] = []
  const ports = {
    cache: { get: (name: string) => (name === "n1-r" ? n : undefined), names: () => ["n1-r"] },
    events: {
      emit: (e: NodeEventInput) => Effect.sync(() => void events.push(e)),
      emitNow: (e: NodeEventInput) => Effect.sync(() => void events.push(e)),
      emitDeduped: (_k: string, _t: number, e: NodeEventInput) => Effect.sync(() => void events.push(e))
    },
    config,
    cloud
  }
  const up = fact({ _tag: "ReplacementReady", nodeName: "n1-r", note: "replacement n1-r is Ready" })
  return Effect.map(gateReplacement(ports, r, up, healthTimesOutAt), (out) => ({ out, events }))
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

/** A cloud that proves the replacement's type (AWS), counting what it is asked. */
const provingCloud = (answer: () => Effect.Effect<PromisedGpus | undefined, CloudError>) => {
  const asked: string[] = []
  return {
    asked,
    cloud: {
      promisedGpus: (name: string) =>
        Effect.suspend(() => {
          asked.push(name)
          return answer()
        })
    }
  }
}
const P5 = { instanceId: "i-0abc", instanceType: "p5.48xlarge", gpus: 8 }

describe("the replacement gate, where the cloud proves what the type promises", () => {
  it.effect(
    "the type's GPUs are required, not the repaired node's: a repaired node already short one is no excuse",
    () =>
      Effect.gen(function* () {
        // The repaired node had lost a GPU before the repair (capacity 7): the record expects 7; its type promises 8.
        const { cloud, asked } = provingCloud(() => Effect.succeed(P5))
        const { out, events } = yield* gate(node("True", "7"), true, undefined, cloud, record(true, 7))
        expect(asked).toEqual(["n1-r"])
        expect(out).toEqual(
          fact({
            _tag: "ReplacementUnhealthy",
            nodeName: "n1-r",
            check: "GpuCapacity",
            why: "nvidia.com/gpu capacity 7, expected 8 (p5.48xlarge promises 8, instance i-0abc)",
            attemptsAllowed: 3
          })
        )
        expect(events).toEqual([])
      })
  )

  it.effect("every promised GPU allocatable: one withheld by the device plugin fails GpuAllocatable", () =>
    Effect.gen(function* () {
      const { cloud } = provingCloud(() => Effect.succeed(P5))
      const { out } = yield* gate(node("True", "8", "7"), true, undefined, cloud)
      expect(out).toMatchObject({
        _tag: "Fact",
        fact: {
          _tag: "ReplacementUnhealthy",
          check: "GpuAllocatable",
          why: "nvidia.com/gpu allocatable 7 of capacity 8 (p5.48xlarge promises 8, instance i-0abc)"
        }
      })
    })
  )

  it.effect("all promised GPUs there and allocatable: capacity", () =>
    Effect.gen(function* () {
      const { cloud } = provingCloud(() => Effect.succeed(P5))
      const { out } = yield* gate(node("True", "8"), true, undefined, cloud, record(true, 7))
      expect(out).toMatchObject({ _tag: "Fact", fact: { _tag: "ReplacementReady" } })
    })
  )

  it.effect("not Ready yet: the cloud is not asked", () =>
    Effect.gen(function* () {
      const { cloud, asked } = provingCloud(() => Effect.succeed(P5))
      const { out } = yield* gate(node("True", "8", "8", "False"), true, undefined, cloud)
      expect(out).toMatchObject({ _tag: "Wait" })
      expect(asked).toEqual([])
    })
  )

  it.effect(
    "a machine the cloud does not know yet, or a cloud that fails, waits within the bound; then Timeout",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 10_000)
        const unknown = provingCloud(() => Effect.succeed(undefined))
        expect((yield* gate(node("True"), true, T0 + 30_000, unknown.cloud)).out).toMatchObject({
          _tag: "Wait"
        })
        const failing = provingCloud(() =>
          Effect.fail(
            new CloudError({ operation: "DescribeInstanceTypes", message: "throttled", retryable: true })
          )
        )
        expect((yield* gate(node("True"), true, T0 + 30_000, failing.cloud)).out).toMatchObject({
          _tag: "Wait"
        })
        yield* TestClock.setTime(T0 + 30_000)
        expect((yield* gate(node("True"), true, T0 + 30_000, unknown.cloud)).out).toMatchObject({
          _tag: "Fact",
          fact: {
            _tag: "ReplacementUnhealthy",
            check: "Timeout",
            why: "not healthy within 30s of Ready: the cloud does not know its machine yet"
          }
        })
      })
  )
})
