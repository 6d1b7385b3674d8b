/**
 * Runs a repair's state machine step by step within one reconcile, persisting the record after every step (a
 * wave's taint outcomes: before their next action), until a step has to wait (then the key is requeued after
 * exactly that long) or the repair ends. Every repair ends: a failed step is retried within its budget, a phase
 * past its deadline fails (repair/budget.ts).
 */
import { Clock, Effect, Metric, Ref } from "effect"
import { executeStep, stepError } from "../actions/executeStep.ts"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import * as M from "../observability/metrics.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { metricReason } from "../observability/seriesBounds.ts"
import { afterFailure } from "../repair/budget.ts"
import { isTerminal, type RepairRecord } from "../domain/RepairRecord.ts"
import { type Gates, NOT_THE_SAME_NODE, planStep, type Step } from "../repair/plan.ts"
import { advance } from "../repair/stateMachine.ts"
import { provenScope, sightRelapse } from "./relapseSighting.ts"
import type { RunRepairPorts } from "./repairPorts.ts"
import { unhealthyReplacement } from "./unhealthyReplacement.ts"
import { requestsEnded } from "./requestedRepair.ts"

const MAX_STEPS_PER_RECONCILE = 25

/** A repair's metric labels; its reason bounded by the catalog and the config (observability/seriesBounds.ts). */
export const labelsOf = (config: ControllerConfig, r: RepairRecord) => ({
  condition: r.conditionType,
  reason: metricReason(config, r.reason),
  action: r.action
})

/**
 * An Event about the repair's Node. A terminal one (`now`) is written before returning, ahead of the journal
 * delete: a crash in between repeats it on resume, never loses it.
 */
const repairEvent = (
  env: RunRepairPorts,
  r: RepairRecord,
  type: "Normal" | "Warning",
  reason: string,
  note: string,
  write: "queued" | "now" = "queued"
) =>
  (write === "now" ? env.events.emitNow : env.events.emit)({
    node: { name: r.node.name, uid: r.node.uid },
    type,
    reason,
    action: "Repair",
    note
  })

const succeeded = (env: RunRepairPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    yield* repairEvent(
      env,
      r,
      "Normal",
      "RepairSucceeded",
      r.action === "Replace"
        ? `replaced by ${r.replacement?.nodeName ?? r.replacement?.instanceId ?? "?"} (${r.conditionType}=${r.conditionStatus}, ${r.reason})${r.logBundle ? `; logs: ${r.logBundle}` : ""}`
        : `healthy after reboot (${r.conditionType}, ${r.reason})`,
      "now"
    )
    // The relapse ledger first (it keeps a repair once, by id): a crash before the journal entry goes repeats it.
    // Its failure costs evidence, not the repair.
    yield* env.relapse.repaired(r, yield* Clock.currentTimeMillis).pipe(
      Effect.catch((e) =>
        Effect.logWarning("could not record the repair in its relapse ledger", {
          node: r.node.name,
          error: e.message
        })
      )
    )
    // So does a reboot's node: its fault back soon after escalates the next repair to Replace (RebootStore.ts).
    yield* env.reboots.repaired(r, yield* Clock.currentTimeMillis).pipe(
      Effect.catch((e) =>
        Effect.logWarning("could not record the reboot for escalation", {
          node: r.node.name,
          error: e.message
        })
      )
    )
    yield* requestsEnded(env, r, "Succeeded")
    yield* env.store.finish(r)
    // Its replacement is looked at again: it may have come up with the same fault while the repair ran.
    // So are the pool's other unhealthy nodes: one that came up after the repair started may have, too. Sighted
    // now, under repair or not: a replacement that relapsed while this repair ran may be under repair already.
    const now = yield* Clock.currentTimeMillis
    for (const n of [r.replacement?.nodeName, ...env.cache.counter.unhealthyNames()]) {
      if (n === undefined || n === r.node.name) continue
      const view = env.cache.view(n)
      if (view === undefined || provenScope(env, view) !== (r.node.pool ?? CLUSTER_SCOPE)) continue
      yield* sightRelapse(env, view, now)
      env.queue.add(n)
    }
    env.flushPoolMetrics()
    yield* Metric.update(Metric.withAttributes(M.repairsCompleted, labelsOf(env.config, r)), 1)
    yield* Effect.logInfo("repair succeeded", { node: r.node.name, id: r.id, action: r.action })
  })

/** A failed repair keeps its taint and journal entry for an operator, unless the Node is another object now. */
const failedRepair = (env: RunRepairPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    yield* repairEvent(
      env,
      r,
      "Warning",
      "RepairFailed",
      (r.failure ?? "repair failed").slice(0, 1000),
      "now"
    )
    yield* requestsEnded(env, r, "Failed")
    if (r.failure?.startsWith(NOT_THE_SAME_NODE) === true) yield* env.store.finish(r)
    env.flushPoolMetrics()
    yield* Metric.update(Metric.withAttributes(M.repairsFailed, labelsOf(env.config, r)), 1)
    yield* Effect.logError("repair failed; record kept for an operator", {
      node: r.node.name,
      id: r.id,
      failure: r.failure
    })
  })

const finish = (env: RunRepairPorts, r: RepairRecord) =>
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
    env.drains.leave(r.id)
  })

/**
 * Persists `next` and ends the repair when it is terminal. A Succeeded record is never written: its journal
 * entry is deleted instead, so a crash in between leaves the previous step's record, which a restart resumes
 * (a written Succeeded record would never be read again and would hold the node's name for good).
 */
const persistStep = (
  env: RunRepairPorts,
  prev: RepairRecord,
  next: RepairRecord,
  write: "now" | "beforeNextAction" = "now"
) =>
  Effect.gen(function* () {
    if (next.phase === "Succeeded") {
      // Deleted by `finish`, never written.
    } else if (write === "now") yield* env.store.persist(next)
    else env.store.stage(next)
    yield* observeStep(prev, next)
    if (isTerminal(next)) yield* finish(env, next)
  })

/**
 * When a step moves a repair on: the time it spent in the phase it leaves (from the journal's phaseSince, so a
 * failover does not restart the clock), and, when it ends, the time since it started.
 */
const observeStep = (prev: RepairRecord, next: RepairRecord) =>
  Effect.gen(function* () {
    if (next.phase === prev.phase) return
    const now = yield* Clock.currentTimeMillis
    const seconds = (iso: string | undefined) =>
      iso === undefined ? Number.NaN : Math.max(0, now - Date.parse(iso)) / 1000
    // A record journaled before phaseSince existed: counted from the repair's start (an upper bound).
    const since = seconds(prev.phaseSince ?? prev.startedAt)
    if (Number.isFinite(since))
      yield* Metric.update(
        Metric.withAttributes(M.repairPhaseSeconds, { phase: prev.phase, action: prev.action }),
        since
      )
    const total = seconds(prev.startedAt)
    if (isTerminal(next) && !isTerminal(prev) && Number.isFinite(total))
      yield* Metric.update(
        Metric.withAttributes(M.repairDuration, { action: next.action, outcome: next.phase }),
        total
      )
  })

/** The gates as they stand now, for the plan (repair/plan.ts). */
const gatesOf = (env: RunRepairPorts, r: RepairRecord, now: number) =>
  Effect.map(
    Ref.get(env.shifts),
    (shifts): Gates => ({
      liveNode: env.cache.view(r.node.name),
      taintHoldMs: env.taintFirst.holdMs(now),
      drainSlot: env.drains.holds(r.id),
      shifts
    })
  )

/** Carries out a hold; true when the repair may go on at once (a drain slot was free). */
const hold = (env: RunRepairPorts, r: RepairRecord, step: Extract<Step, { _tag: "Hold" }>) =>
  Effect.gen(function* () {
    switch (step.cause) {
      case "taintFirst":
      case "evictionBackoff":
        env.queue.addAfter(r.node.name, step.retryAfterMs)
        return false
      case "drainSlot":
        // Parked without a slot: woken (queue.add) when one is handed to it, in order of expiry.
        return env.drains.enter(r.id, r.node.name, Date.parse(r.startedAt))
      case "zonalShift": {
        const gate = step.gate
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
        return false
      }
    }
  })

/** A capacity-first repair that could not get its replacement says so, and what follows, where operators look. */
const reportNoCapacity = (env: RunRepairPorts, r: RepairRecord) =>
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

export const runRepair = (env: RunRepairPorts, start: RepairRecord) =>
  Effect.gen(function* () {
    let r = start
    for (let i = 0; i < MAX_STEPS_PER_RECONCILE; i++) {
      if (isTerminal(r)) return
      const now = yield* Clock.currentTimeMillis
      const step = planStep(r, env.config, now, yield* gatesOf(env, r, now))
      if (step._tag === "End") return yield* persistStep(env, r, step.record)
      if (step._tag === "Hold") {
        if (yield* hold(env, r, step)) continue
        return
      }
      // A step staged behind a wave's taints (below) is journaled before the repair acts again.
      yield* env.store.flush(r.node.name)
      const result = yield* Effect.result(executeStep(env, r, step.action))
      if (result._tag === "Failure") {
        const verdict = afterFailure(r, stepError(result.failure), env.config, yield* Clock.currentTimeMillis)
        yield* Effect.logWarning("repair step failed", {
          node: r.node.name,
          id: r.id,
          phase: r.phase,
          error: stepError(result.failure).message,
          outcome: verdict._tag
        })
        yield* persistStep(env, r, verdict.record)
        if (verdict._tag === "Retry") env.queue.addAfter(r.node.name, verdict.delayMs)
        return
      }
      const outcome = result.success
      if (outcome._tag === "Wait") {
        // A step that worked again after failures starts its budget afresh; what it learned is journaled.
        const learned =
          outcome.fact === undefined ? withoutRetry(r) : advance(withoutRetry(r), outcome.fact, now)
        if (learned !== r) yield* persistStep(env, r, learned)
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
      if (outcome.fact._tag === "ReplacementUnhealthy")
        yield* unhealthyReplacement(env, r, next, outcome.fact)
      else if (r.order === "capacityFirst" && (next.order === "removeFirst" || next.phase === "Failed"))
        yield* reportNoCapacity(env, next)
      // The taint's outcome, while a wave's starts are still being written, is journaled before the repair's next
      // action instead of now: that action waits for the wave anyway (TaintFirst), and the worker goes to the next
      // node's start one round trip sooner (issue #25). A crash in between re-taints, which changes nothing.
      const behindWave =
        outcome.fact._tag === "Tainted" &&
        !isTerminal(next) &&
        env.taintFirst.holdMs(yield* Clock.currentTimeMillis) > 0
      yield* persistStep(env, r, next, behindWave ? "beforeNextAction" : "now")
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
