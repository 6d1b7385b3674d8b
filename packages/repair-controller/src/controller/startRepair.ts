/**
 * Starts a repair only on a node the cloud vouches for: its instance is this Node's, and the pool and zone the
 * breaker and the zonal-shift gate judged it by are the cloud's, not labels the node set on itself. The record
 * (with the cloud's facts) goes to the journal before the first action.
 */
import { Effect, Metric } from "effect"
import type { Decision } from "../decide/decide.ts"
import { escalationText } from "../decide/escalation.ts"
import { identityRefusal } from "../decide/identity.ts"
import { healthExpectations } from "../decide/replacementHealth.ts"
import { replacementNodeOf } from "../actions/replacementGate.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import * as M from "../observability/metrics.ts"
import { newRepairRecord } from "../repair/stateMachine.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import { RUN_REPAIR_PORTS, type RunRepairPorts } from "./repairPorts.ts"
import { labelsOf, runRepair } from "./runRepair.ts"

/** What a repair's start uses: its run's ports and the cloud's early answers (PreProofs). */
export type StartRepairPorts = RunRepairPorts & Pick<ControllerEnv, "preProofs">
export const START_REPAIR_PORTS = [...RUN_REPAIR_PORTS, "preProofs"] as const

const newRepairId = (uid: string, now: number) => `${uid.slice(0, 8)}-${now.toString(36)}`

const refused = (env: StartRepairPorts, node: NodeView, why: string) =>
  env.events.emitDeduped(`${node.name}/RepairRefused/${why}`, EVENT_DEDUPE_MS, {
    node: { name: node.name, uid: node.uid },
    type: "Warning",
    reason: "RepairRefused",
    action: "Decide",
    note: `not repairing: ${why}`.slice(0, 1000)
  })

export const startRepair = (
  env: StartRepairPorts,
  node: NodeView,
  d: Extract<Decision, { _tag: "Repair" }>,
  now: number,
  /** Run once the record is journaled, before the first action (plannedRepair.ts journals its event there). */
  recorded: (record: RepairRecord) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function* () {
    const name = node.name
    if (node.uid === undefined) return
    // The cloud's answer asked shortly before the expiry, when it is for this very Node and fresh; else asked now.
    const vouched = yield* env.preProofs.take(node)
    yield* Metric.update(
      Metric.withAttributes(M.ownerProofs, { asked: vouched !== undefined ? "ahead" : "decision" }),
      1
    )
    const owned = yield* env.owners.prove(node, vouched)
    switch (owned._tag) {
      case "Retry":
        yield* Effect.logWarning("cannot inspect the instance; retrying", { node: name, error: owned.error })
        env.queue.addAfter(name, env.config.retry.maxBackoffSeconds * 1000)
        return
      case "OwnerActing":
        return yield* env.events.emitDeduped(`${name}/OwnerActing`, EVENT_DEDUPE_MS, {
          node: { name, uid: node.uid },
          type: "Normal",
          reason: "RepairDeferred",
          action: "Decide",
          note: `not repairing: ${owned.owner} is already taking this node away (${owned.why})`.slice(0, 1000)
        })
      case "Refused":
        yield* Metric.update(Metric.withAttributes(M.repairsRefused, { cause: owned.cause }), 1)
        return yield* refused(env, node, owned.why)
    }
    const facts = { success: owned.facts }
    const refusal = identityRefusal(env.config, node, facts.success)
    if (refusal !== undefined) {
      yield* Metric.update(Metric.withAttributes(M.repairsRefused, { cause: "identity" }), 1)
      return yield* refused(env, node, refusal)
    }
    const started = newRepairRecord(
      {
        id: newRepairId(node.uid, now),
        match: d.governing,
        node: {
          name,
          uid: node.uid,
          providerID: node.providerID ?? "",
          // The pool and zone this repair counts in for good: the proven ones the decision was made under (the
          // owner's answer, Placements.ts; the breaker took its slot there), else the cloud's now; never the
          // node's later labels.
          ...((d.pool ?? facts.success.pool) !== undefined ? { pool: d.pool ?? facts.success.pool } : {}),
          ...((d.zone ?? facts.success.zone) !== undefined ? { zone: d.zone ?? facts.success.zone } : {}),
          labels: node.labels,
          instance: facts.success
        },
        // What its replacement must show to count as capacity: fixed now, from the node as it is and the cloud's facts.
        replacementExpects: healthExpectations(
          env.config,
          {
            conditionTypes: node.conditions.map((c) => c.type),
            capacity: replacementNodeOf(env.cache.get(name))?.capacity ?? {}
          },
          facts.success.launch,
          d.pool ?? facts.success.pool
        )
      },
      now
    )
    const e = d.escalation
    const record =
      e === undefined
        ? started
        : {
            ...started,
            escalatedAfter: {
              repairId: e.rebooted.repairId,
              rebootedAt: new Date(e.rebooted.at).toISOString(),
              reason: e.rebooted.reason,
              cameBackAt: new Date(e.cameBackAt).toISOString()
            }
          }
    yield* Metric.update(Metric.withAttributes(M.repairsStarted, labelsOf(env.config, record)), 1)
    yield* Effect.logInfo("repair started", {
      node: name,
      id: record.id,
      condition: record.conditionType,
      reason: record.reason,
      action: record.action,
      pool: d.breaker.scope
    })
    // On the way to the taint: the work behind the taints of a wave waits for it too (actions/TaintFirst.ts).
    yield* env.taintFirst.starting(env.store.persist(record))
    yield* recorded(record)
    env.flushPoolMetrics()
    if (e !== undefined) {
      yield* env.events.emit({
        node: { name, uid: node.uid },
        type: "Warning",
        reason: "RepairEscalated",
        action: "Repair",
        note: escalationText(e, d.governing).slice(0, 1000)
      })
      yield* Metric.update(M.repairsEscalated, 1)
    }
    yield* env.events.emit({
      node: { name, uid: node.uid },
      type: "Warning",
      reason: "RepairStarted",
      action: "Repair",
      note: `${record.action} (${record.order === "capacityFirst" ? "replacement first" : "removal first"}, through ${env.owners.of(record).name(record)}) for ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}); pool ${d.breaker.scope} has ${d.breaker.unhealthy} unhealthy of ${d.breaker.size} (allowed ${d.breaker.allowed})${record.requestedBy !== undefined ? `; ${d.governing.message}` : ""}`.slice(
        0,
        1000
      )
    })
    return yield* runRepair(env, record)
  })
