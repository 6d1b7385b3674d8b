/**
 * Runs a repair's state machine step by step within one reconcile, persisting the record after every step,
 * until a step has to wait (then the key is requeued after exactly that long) or the repair ends. Every repair
 * ends: a failed step is retried within its budget, a phase past its deadline fails (repair/budget.ts).
 */
import { Clock, Effect, Metric, Ref } from "effect"
import { executeStep, stepError } from "../actions/executeStep.ts"
import { liveNodeMismatch } from "../decide/identity.ts"
import { gateForRepair } from "../decide/zonalShiftGate.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import * as M from "../observability/metrics.ts"
import { afterFailure, failed, overdue } from "../repair/budget.ts"
import { isTerminal, needsLiveNode, type RepairRecord } from "../domain/RepairRecord.ts"
import { advance, nextAction } from "../repair/stateMachine.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

const MAX_STEPS_PER_RECONCILE = 25
/** The prefix of a failure that says the Node is another object now: its record is cleared, not kept. */
export const NOT_THE_SAME_NODE = "the Node is not the one this repair started on"

export const labelsOf = (r: RepairRecord) => ({
  condition: r.conditionType,
  reason: r.reason,
  action: r.action
})

const repairEvent = (
  env: ControllerEnv,
  r: RepairRecord,
  type: "Normal" | "Warning",
  reason: string,
  note: string
) => env.events.emit({ node: { name: r.node.name, uid: r.node.uid }, type, reason, action: "Repair", note })

const succeeded = (env: ControllerEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    yield* env.store.finish(r)
    env.flushPoolMetrics()
    yield* Metric.update(Metric.withAttributes(M.repairsCompleted, labelsOf(r)), 1)
    yield* repairEvent(
      env,
      r,
      "Normal",
      "RepairSucceeded",
      r.action === "Replace"
        ? `replaced by ${r.replacement?.nodeName ?? r.replacement?.instanceId ?? "?"} (${r.conditionType}=${r.conditionStatus}, ${r.reason})`
        : `healthy after reboot (${r.conditionType}, ${r.reason})`
    )
    yield* Effect.logInfo("repair succeeded", { node: r.node.name, id: r.id, action: r.action })
  })

/** A failed repair keeps its taint and journal entry for an operator, unless the Node is another object now. */
const failedRepair = (env: ControllerEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    if (r.failure?.startsWith(NOT_THE_SAME_NODE) === true) yield* env.store.finish(r)
    env.flushPoolMetrics()
    yield* Metric.update(Metric.withAttributes(M.repairsFailed, labelsOf(r)), 1)
    yield* repairEvent(env, r, "Warning", "RepairFailed", (r.failure ?? "repair failed").slice(0, 1000))
    yield* Effect.logError("repair failed; record kept for an operator", {
      node: r.node.name,
      id: r.id,
      failure: r.failure
    })
  })

const finish = (env: ControllerEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    // What the repair held from the owner is the owner's again: a replacement made for a failed repair is ordinary
    // capacity (Karpenter may consolidate it), and nothing of it is asked for again.
    yield* env.owners
      .of(r)
      .release(r)
      .pipe(
        Effect.catch((e) =>
          Effect.logWarning("could not release the repair's hold on its owner", {
            node: r.node.name,
            error: e
          })
        )
      )
    yield* r.phase === "Succeeded" ? succeeded(env, r) : failedRepair(env, r)
    env.backoff.delete(r.id)
    env.drains.leave(r.id)
  })

/**
 * Persists `next` and ends the repair when it is terminal. A Succeeded record is never written: its journal
 * entry is deleted instead, so a crash in between leaves the previous step's record, which a restart resumes
 * (a written Succeeded record would never be read again and would hold the node's name for good).
 */
const persistStep = (env: ControllerEnv, next: RepairRecord) =>
  Effect.gen(function* () {
    if (next.phase !== "Succeeded") yield* env.store.persist(next)
    if (isTerminal(next)) yield* finish(env, next)
  })

/** The record, ended as Failed, when its Node is gone wrong or its phase is overdue; undefined otherwise. */
const endedEarly = (env: ControllerEnv, r: RepairRecord, now: number): RepairRecord | undefined => {
  const mismatch = needsLiveNode(r) ? liveNodeMismatch(r, env.cache.view(r.node.name)) : undefined
  if (mismatch !== undefined) return failed(r, `${NOT_THE_SAME_NODE}: ${mismatch}; not acting on it`, now)
  return overdue(r, env.config, now)
}

/** Taints go first and drains take a slot (DrainPool); false when this drain must wait its turn. */
const mayDrain = (env: ControllerEnv, r: RepairRecord, now: number): boolean => {
  const hold = env.taintFirst.drainHoldMs(now)
  if (hold > 0) {
    env.queue.addAfter(r.node.name, hold)
    return false
  }
  // Parked without a drain slot: woken (queue.add) when one is handed to it, in order of expiry.
  return env.drains.enter(r.id, r.node.name, Date.parse(r.startedAt))
}

/**
 * A zonal shift (or a cloud that cannot say) that began after the repair started holds it before its
 * irreversible step: no termination or reboot while it lasts. The node stays tainted and drained, the phase
 * deadline still runs, and the repair goes on when the shift ends.
 */
const heldByShift = (env: ControllerEnv, r: RepairRecord, now: number) =>
  Effect.gen(function* () {
    const gate = gateForRepair(env.config, yield* Ref.get(env.shifts), r, now)
    if (gate._tag === "Open") return false
    const why =
      gate.cause === "shift"
        ? `a ${gate.shift.kind} away from ${gate.shift.zone ?? gate.shift.zoneId ?? "a zone"} is active`
        : `the cloud provider cannot say whether a zonal shift is active (${gate.error})`
    yield* env.events.emitDeduped(`${r.id}/StandDown/${gate.cause}`, EVENT_DEDUPE_MS, {
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "RepairStandDown",
      action: "Repair",
      note: `repair held before ${r.action === "Reboot" && r.phase === "Rebooting" ? "the reboot" : "termination"}: ${why}`
    })
    env.queue.addAfter(r.node.name, env.config.zonalShift.refreshSeconds * 1000)
    return true
  })

/** A capacity-first repair that could not get its replacement says so, and what follows, where operators look. */
const reportNoCapacity = (env: ControllerEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const then = r.phase === "Failed" ? "fail" : "removeFirst"
    yield* Metric.update(Metric.withAttributes(M.capacityFallbacks, { then }), 1)
    yield* repairEvent(
      env,
      r,
      "Warning",
      "ReplacementUnavailable",
      `no replacement before removal: ${r.fallback ?? r.failure ?? "?"}; ${then === "fail" ? "the node is kept (onNoCapacity: fail)" : "draining and removing the node first (onNoCapacity: removeFirst)"}`.slice(
        0,
        1000
      )
    )
  })

export const runRepair = (env: ControllerEnv, start: RepairRecord) =>
  Effect.gen(function* () {
    let r = start
    for (let i = 0; i < MAX_STEPS_PER_RECONCILE; i++) {
      if (isTerminal(r)) return
      const now = yield* Clock.currentTimeMillis
      const ended = endedEarly(env, r, now)
      if (ended !== undefined) return yield* persistStep(env, ended)
      const action = nextAction(r, env.config, now)
      if ((action._tag === "Drain" || action._tag === "ForceDrain") && !mayDrain(env, r, now)) return
      if ((action._tag === "Terminate" || action._tag === "Reboot") && (yield* heldByShift(env, r, now)))
        return
      const result = yield* Effect.result(executeStep(env, r, action))
      if (result._tag === "Failure") {
        const verdict = afterFailure(r, stepError(result.failure), env.config, yield* Clock.currentTimeMillis)
        yield* Effect.logWarning("repair step failed", {
          node: r.node.name,
          id: r.id,
          phase: r.phase,
          error: stepError(result.failure).message,
          outcome: verdict._tag
        })
        yield* persistStep(env, verdict.record)
        if (verdict._tag === "Retry") env.queue.addAfter(r.node.name, verdict.delayMs)
        return
      }
      const outcome = result.success
      if (outcome._tag === "Wait") {
        // A step that worked again after failures starts its budget afresh.
        if (r.retry !== undefined) yield* persistStep(env, withoutRetry(r))
        env.queue.addAfter(r.node.name, Math.max(outcome.requeueAfterMs, 50))
        return
      }
      const next = advance(withoutRetry(r), outcome.fact, yield* Clock.currentTimeMillis)
      if (next.phase !== "Draining") env.drains.leave(r.id)
      if (next === r) {
        env.queue.addAfter(r.node.name, 1000)
        return
      }
      if (next.phase !== r.phase)
        yield* Effect.logInfo("repair step", { node: r.node.name, id: r.id, from: r.phase, to: next.phase })
      if (r.order === "capacityFirst" && (next.order === "removeFirst" || next.phase === "Failed"))
        yield* reportNoCapacity(env, next)
      yield* persistStep(env, next)
      r = next
      if (isTerminal(r)) return
      // Take turns: with other nodes waiting (a burst of expiries), one step each, so every taint lands early.
      if (env.queue.length() > 0) {
        env.queue.add(r.node.name)
        return
      }
    }
    env.queue.add(r.node.name)
  })

const withoutRetry = (r: RepairRecord): RepairRecord => {
  if (r.retry === undefined) return r
  const { retry: _retry, ...rest } = r
  return rest
}
