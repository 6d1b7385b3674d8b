/**
 * An Event reason promoted to a Condition by config clears after its quiet period (TestClock): the real
 * finding sink (overrides, routing) and the ConditionWriter's state reducer; only the API calls are left out
 * (the cluster test in test/integration/agent-promoted.test.ts runs the binary against the API server).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { parseConfigText } from "../../src/config/load.ts"
import type { AgentConfig } from "../../src/config/schema.ts"
import {
  applyFinding,
  type ConditionState,
  desiredConditions,
  emptyState
} from "../../src/k8s/condition-state.ts"
import { makeFindingSink } from "../../src/k8s/finding-sink.ts"
import type { Detection, Finding } from "../../src/model.ts"
import {
  DEFAULT_PROMOTED_QUIET_SECONDS,
  promotedQuietMs,
  withPromotedRecovery
} from "../../src/recovery/promoted-recovery.ts"

const config = (text: string): AgentConfig => {
  const r = parseConfigText(text, "c.yaml")
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

// The kernel's segfault report (catalog AppCrash, severity Event), as log-lines.ts has it.
const crash = (subject: string, atMs: number): Detection => ({
  _tag: "Detection",
  monitor: "kernel",
  reason: "AppCrash",
  conditionType: "KernelReady",
  severity: "Event",
  message: `Application crash detected: ${subject}`,
  observedAtMs: atMs,
  subject
})

/** The real sink over an in-memory ConditionWriter state; returns a reader of KernelReady's status. */
const harness = (cfg: AgentConfig) =>
  Effect.gen(function* () {
    let state: ConditionState = emptyState
    const events: Detection[] = []
    const inner = makeFindingSink(
      cfg,
      {
        submit: (fs: readonly Finding[]) =>
          Effect.sync(() => {
            for (const f of fs) state = applyFinding(state, f)
          })
      } as never,
      { record: (d) => Effect.sync(() => void events.push(d)) }
    )
    const sink = yield* withPromotedRecovery(cfg, inner)
    const kernelReady = () =>
      desiredConditions(state, new Set(["KernelReady"]), "b").get("KernelReady")!.status
    return { sink, kernelReady, events }
  })

describe("promoted Event reasons recover", () => {
  it("promotedQuietMs: only an Event reason configured as a Condition has a quiet period", () => {
    const promoted = config("monitors: { kernel: { reasons: { AppCrash: { severity: Condition } } } }")
    expect(promotedQuietMs(promoted, crash("a", 0))).toBe(DEFAULT_PROMOTED_QUIET_SECONDS * 1000)
    expect(promotedQuietMs(config(""), crash("a", 0))).toBeUndefined()
    const quiet = config(
      "monitors: { kernel: { reasons: { AppCrash: { severity: Condition, quietSeconds: 60 } } } }"
    )
    expect(promotedQuietMs(quiet, crash("a", 0))).toBe(60_000)
    // a catalog Condition (recovery reboot) never gets one
    const softLockupAsCondition = config(
      "monitors: { kernel: { reasons: { ForkFailedOutOfPIDs: { severity: Condition } } } }"
    )
    expect(
      promotedQuietMs(softLockupAsCondition, {
        ...crash("x", 0),
        reason: "ForkFailedOutOfPIDs",
        severity: "Condition"
      })
    ).toBeUndefined()
    // a DCGM health FAIL: an Event reason the monitor itself emits as a Condition (catalog alsoEmittedAs),
    // resolved by the monitor when the FAIL is gone; no timer may clear it while it persists
    const fail: Detection = {
      _tag: "Detection",
      monitor: "nvidia",
      reason: "DCGMHealthCode4",
      conditionType: "AcceleratedHardwareReady",
      severity: "Condition",
      message: "DCGM detected issues in health check system with error code 4",
      observedAtMs: 0,
      subject: "0000:3b:00"
    }
    expect(promotedQuietMs(config(""), fail)).toBeUndefined()
  })

  it.effect("False on the occurrence, True again after quietSeconds without another", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const cfg = config(
          "monitors: { kernel: { reasons: { AppCrash: { severity: Condition, quietSeconds: 120 } } } }"
        )
        const { sink, kernelReady, events } = yield* harness(cfg)
        yield* sink([crash("nginx", 0)])
        expect(kernelReady()).toBe("False")
        expect(events).toEqual([])
        yield* TestClock.adjust("119 seconds")
        expect(kernelReady()).toBe("False")
        yield* TestClock.adjust("1 second")
        expect(kernelReady()).toBe("True")
      })
    )
  )

  it.effect("each occurrence restarts the quiet period; subjects clear independently", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const cfg = config(
          "monitors: { kernel: { reasons: { AppCrash: { severity: Condition, quietSeconds: 100 } } } }"
        )
        const { sink, kernelReady } = yield* harness(cfg)
        yield* sink([crash("nginx", 0)])
        yield* TestClock.adjust("60 seconds")
        yield* sink([crash("nginx", 60_000), crash("redis", 60_000)])
        yield* TestClock.adjust("60 seconds") // 120 s: nginx's first quiet period would have ended
        expect(kernelReady()).toBe("False")
        yield* TestClock.adjust("40 seconds") // 160 s: both quiet for 100 s
        expect(kernelReady()).toBe("True")
      })
    )
  )

  it.effect(
    "the default is 600 s; without promotion the reason stays an Event and nothing is scheduled",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const promoted = yield* harness(
            config("monitors: { kernel: { reasons: { AppCrash: { severity: Condition } } } }")
          )
          yield* promoted.sink([crash("nginx", 0)])
          yield* TestClock.adjust("599 seconds")
          expect(promoted.kernelReady()).toBe("False")
          yield* TestClock.adjust("1 second")
          expect(promoted.kernelReady()).toBe("True")

          const plain = yield* harness(config(""))
          yield* plain.sink([crash("nginx", 0)])
          expect(plain.kernelReady()).toBe("True")
          expect(plain.events.map((e) => e.reason)).toEqual(["AppCrash"])
        })
      )
  )
})
