/**
 * One reconcile of one Node name: resume a recorded repair, or decide about a node that has none. A repair
 * runs its state machine step by step within the reconcile (persisting the record after every step) until a
 * step has to wait; then the key is requeued after exactly that long.
 */
import { Clock, Effect, Metric, Ref } from "effect"
import { type Decision, decide } from "../decide/decide.ts"
import { poolOf } from "../decide/breaker.ts"
import { identityRefusal, liveNodeMismatch } from "../decide/identity.ts"
import { type NodeView, ZONE_LABEL } from "../decide/NodeView.ts"
import { nodeRef } from "../kube/views.ts"
import * as M from "../observability/metrics.ts"
import { isTerminal, needsLiveNode, type RepairRecord } from "../repair/RepairRecord.ts"
import { advance, nextAction, startRepair } from "../repair/stateMachine.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import { executeAction } from "./executeAction.ts"

const MAX_STEPS_PER_RECONCILE = 25
const NOT_THE_SAME_NODE = "the Node is not the one this repair started on"
const DEDUPE_MS = 15 * 60_000

const labelsOf = (r: RepairRecord) => ({ condition: r.conditionType, reason: r.reason, action: r.action })

const finishRepair = (env: ControllerEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const node = { name: r.node.name, uid: r.node.uid }
    if (r.phase === "Succeeded") {
      yield* env.store.finish(r)
      yield* Metric.update(Metric.withAttributes(M.repairsCompleted, labelsOf(r)), 1)
      yield* env.events.emit({
        node,
        type: "Normal",
        reason: "RepairSucceeded",
        action: "Repair",
        note:
          r.action === "Replace"
            ? `replaced by ${r.replacement?.nodeName ?? r.replacement?.instanceId ?? "?"} (${r.conditionType}=${r.conditionStatus}, ${r.reason})`
            : `healthy after reboot (${r.conditionType}, ${r.reason})`
      })
      yield* Effect.logInfo("repair succeeded", { node: r.node.name, id: r.id, action: r.action })
    } else {
      // The Node is another object now: its repair record must not stand in the way of judging it afresh.
      if (r.failure?.startsWith(NOT_THE_SAME_NODE) === true) yield* env.store.finish(r)
      yield* Metric.update(Metric.withAttributes(M.repairsFailed, labelsOf(r)), 1)
      yield* env.events.emit({
        node,
        type: "Warning",
        reason: "RepairFailed",
        action: "Repair",
        note: r.failure ?? "repair failed"
      })
      yield* Effect.logError("repair failed; record kept for an operator", {
        node: r.node.name,
        id: r.id,
        failure: r.failure
      })
    }
    env.backoff.delete(r.id)
    env.launched.delete(r.id)
    env.drains.leave(r.id)
  })

/** Runs the state machine until it must wait. */
export const runRepair = (env: ControllerEnv, start: RepairRecord) =>
  Effect.gen(function* () {
    let r = start
    for (let i = 0; i < MAX_STEPS_PER_RECONCILE; i++) {
      if (isTerminal(r)) return
      const now = yield* Clock.currentTimeMillis
      const mismatch = needsLiveNode(r) ? liveNodeMismatch(r, env.cache.view(r.node.name)) : undefined
      if (mismatch !== undefined) {
        r = advance(r, { _tag: "Aborted", why: `${NOT_THE_SAME_NODE}: ${mismatch}; not acting on it` }, now)
        yield* env.store.persist(r)
        return yield* finishRepair(env, r)
      }
      const action = nextAction(r, env.config, now)
      if (action._tag === "Drain" || action._tag === "ForceDrain") {
        // Taints first: other nodes' taints are being written (or just were); drain a moment later.
        const hold = env.taintFirst.drainHoldMs(now)
        if (hold > 0) {
          env.queue.addAfter(r.node.name, hold)
          return
        }
        // Parked without a drain slot: woken (queue.add) when one is handed to it, in order of expiry.
        if (!env.drains.enter(r.id, r.node.name, Date.parse(r.startedAt))) return
      }
      const outcome = yield* executeAction(env, r, action)
      if (outcome._tag === "Wait") {
        env.queue.addAfter(r.node.name, Math.max(outcome.requeueAfterMs, 50))
        return
      }
      const next = advance(r, outcome.fact, yield* Clock.currentTimeMillis)
      if (next.phase !== "Draining") env.drains.leave(r.id)
      if (next === r) {
        env.queue.addAfter(r.node.name, 1000)
        return
      }
      if (next.phase !== r.phase)
        yield* Effect.logInfo("repair step", { node: r.node.name, id: r.id, from: r.phase, to: next.phase })
      yield* env.store.persist(next)
      r = next
      if (isTerminal(r)) return yield* finishRepair(env, r)
      // Take turns: with other nodes waiting (a burst of expiries), one step each, so every taint lands early.
      if (env.queue.length() > 0) {
        env.queue.add(r.node.name)
        return
      }
    }
    env.queue.add(r.node.name)
  })

const newRepairId = (uid: string | undefined, now: number) =>
  `${(uid ?? "x").slice(0, 8)}-${now.toString(36)}`

export const reconcile = (env: ControllerEnv, name: string) =>
  Effect.gen(function* () {
    const stored = env.store.get(name)
    if (stored._tag === "Invalid") {
      yield* env.events.emitDeduped(`${name}/RepairRecordInvalid`, DEDUPE_MS, {
        node: { name, uid: env.cache.get(name)?.metadata?.uid },
        type: "Warning",
        reason: "RepairRecordInvalid",
        action: "Repair",
        note: `the repair journal ${name} cannot be read; not acting: ${stored.error}`.slice(0, 1000)
      })
      return
    }
    if (stored._tag === "Record") {
      if (stored.record.phase === "Failed") return yield* env.store.forgetIfCleared(name)
      if (isTerminal(stored.record)) return
      return yield* runRepair(env, stored.record)
    }
    // A node that is the replacement of a repair in flight wakes that repair.
    const original = env.store.originalOf(name)
    if (original !== undefined && original !== name) env.queue.add(original)

    const node = env.cache.view(name)
    if (node === undefined || node.deleting) return
    const now = yield* Clock.currentTimeMillis
    const d = decide({
      config: env.config,
      node,
      stats: env.cache.counter.stats(),
      shifts: yield* Ref.get(env.shifts),
      now
    })
    const ref = { name, uid: node.uid }
    switch (d._tag) {
      case "Healthy":
        return
      case "Tolerating":
        if (d.requeueAfterMs !== undefined) env.queue.addAfter(name, d.requeueAfterMs)
        return
      case "ReportOnly":
        return yield* env.events.emitDeduped(
          `${name}/ReportOnly/${d.matches.map((m) => m.reason).join(",")}`,
          DEDUPE_MS,
          {
            node: ref,
            type: "Warning",
            reason: "UnhealthyNotRepaired",
            action: "Decide",
            note: `policy action is None for ${d.matches.map((m) => `${m.conditionType}=${m.status} (${m.reason})`).join(", ")}`
          }
        )
      case "Vetoed":
        return yield* env.events.emitDeduped(`${name}/Vetoed/${d.veto}`, DEDUPE_MS, {
          node: ref,
          type: "Normal",
          reason: "RepairVetoed",
          action: "Decide",
          note: `${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}) is past its toleration, but repair is vetoed: ${d.veto}`
        })
      case "StandDown": {
        const why =
          d.gate.cause === "shift"
            ? `a ${d.gate.shift.kind} away from ${d.gate.shift.zone ?? d.gate.shift.zoneId ?? "a zone"} is active until ${d.gate.shift.expiresAt.toISOString()}`
            : `the cloud provider cannot say whether a zonal shift is active (${d.gate.error}); failing closed`
        yield* env.events.emitDeduped(`${name}/StandDown/${d.gate.cause}`, DEDUPE_MS, {
          node: ref,
          type: "Warning",
          reason: "RepairStandDown",
          action: "Decide",
          note: `repair of ${d.governing.conditionType}=${d.governing.status} stands down: ${why}`
        })
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      }
      case "Blocked": {
        const b = d.breaker
        yield* env.events.emitDeduped(`${name}/Blocked`, DEDUPE_MS, {
          node: ref,
          type: "Warning",
          reason: "RepairBlocked",
          action: "Decide",
          note: `more than ${b.percent}% of nodes are unhealthy in ${b.scope === "<cluster>" ? "the cluster" : `nodepool ${b.scope}`} (${b.unhealthy} of ${b.size}, allowed ${b.allowed})`
        })
        yield* Effect.logWarning("breaker open: repair blocked", {
          node: name,
          pool: b.scope,
          unhealthy: b.unhealthy,
          size: b.size,
          allowed: b.allowed
        })
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      }
      case "WouldRepair":
        yield* Metric.update(
          Metric.withAttributes(M.wouldRepair, {
            condition: d.governing.conditionType,
            reason: d.governing.reason
          }),
          1
        )
        return yield* env.events.emitDeduped(`${name}/WouldRepair`, DEDUPE_MS, {
          node: ref,
          type: "Normal",
          reason: "WouldRepair",
          action: "Decide",
          note: `dry-run: would ${d.governing.action} for ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason})`
        })
      case "Repair":
        return yield* startVerifiedRepair(env, node, d, now)
    }
  })

const refused = (env: ControllerEnv, node: NodeView, why: string) =>
  env.events.emitDeduped(`${node.name}/RepairRefused/${why}`, DEDUPE_MS, {
    node: { name: node.name, uid: node.uid },
    type: "Warning",
    reason: "RepairRefused",
    action: "Decide",
    note: `not repairing: ${why}`.slice(0, 1000)
  })

/**
 * Starts a repair only on a node the cloud vouches for: its instance is this Node's, and the pool and zone the
 * breaker and the zonal-shift gate judged it by are the cloud's, not labels the node set on itself. The record
 * (with the cloud's facts) goes to the journal before the first action.
 */
const startVerifiedRepair = (
  env: ControllerEnv,
  node: NodeView,
  d: Extract<Decision, { _tag: "Repair" }>,
  now: number
) =>
  Effect.gen(function* () {
    const name = node.name
    if (node.uid === undefined) return
    const facts = yield* env.cloud.inspect(nodeRef(node)).pipe(Effect.result)
    if (facts._tag === "Failure") {
      const e = facts.failure
      if (e._tag === "CloudError" && e.retryable) {
        yield* Effect.logWarning("cannot inspect the instance; retrying", { node: name, error: e.message })
        env.queue.addAfter(name, env.config.breaker.requeueSeconds * 1000)
        return
      }
      return yield* refused(env, node, e.message)
    }
    const refusal = identityRefusal(env.config, node, facts.success)
    if (refusal !== undefined) return yield* refused(env, node, refusal)
    const pool = poolOf(env.config, node)
    const record = startRepair(
      {
        id: newRepairId(node.uid, now),
        match: d.governing,
        node: {
          name,
          uid: node.uid,
          providerID: node.providerID ?? "",
          ...(pool !== undefined ? { pool } : {}),
          ...(node.labels[ZONE_LABEL] !== undefined ? { zone: node.labels[ZONE_LABEL] } : {}),
          labels: node.labels,
          instance: facts.success
        }
      },
      now
    )
    if (d.governing.expiresAt !== undefined) env.expiredAt.set(record.id, d.governing.expiresAt)
    yield* Metric.update(Metric.withAttributes(M.repairsStarted, labelsOf(record)), 1)
    yield* Effect.logInfo("repair started", {
      node: name,
      id: record.id,
      ...labelsOf(record),
      pool: d.breaker.scope
    })
    yield* env.store.persist(record)
    yield* env.events.emit({
      node: { name, uid: node.uid },
      type: "Warning",
      reason: "RepairStarted",
      action: "Repair",
      note: `${record.action} for ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}); pool ${d.breaker.scope} has ${d.breaker.unhealthy} unhealthy of ${d.breaker.size} (allowed ${d.breaker.allowed})`
    })
    return yield* runRepair(env, record)
  })
