/**
 * Starts a repair only on a node the cloud vouches for: its instance is this Node's, and the pool and zone the
 * breaker and the zonal-shift gate judged it by are the cloud's, not labels the node set on itself. The record
 * (with the cloud's facts) goes to the journal before the first action.
 */
import { Effect, Metric } from "effect"
import type { Decision } from "../decide/decide.ts"
import { identityRefusal } from "../decide/identity.ts"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { NodeView } from "../domain/NodeView.ts"
import { nodeRef } from "../kube/views.ts"
import * as M from "../observability/metrics.ts"
import { startRepair as newRecord } from "../repair/stateMachine.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import { labelsOf, runRepair } from "./runRepair.ts"

export const DEDUPE_MS = 15 * 60_000

const newRepairId = (uid: string, now: number) => `${uid.slice(0, 8)}-${now.toString(36)}`

const refused = (env: ControllerEnv, node: NodeView, why: string) =>
  env.events.emitDeduped(`${node.name}/RepairRefused/${why}`, DEDUPE_MS, {
    node: { name: node.name, uid: node.uid },
    type: "Warning",
    reason: "RepairRefused",
    action: "Decide",
    note: `not repairing: ${why}`.slice(0, 1000)
  })

export const startRepair = (
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
        env.queue.addAfter(name, env.config.retry.maxBackoffSeconds * 1000)
        return
      }
      return yield* refused(env, node, e.message)
    }
    const refusal = identityRefusal(env.config, node, facts.success)
    if (refusal !== undefined) return yield* refused(env, node, refusal)
    // Capacity that cannot come back is not taken away (a reboot may still go ahead).
    const replacer = facts.success.replacer
    if (replacer.by === "none" && d.governing.action !== "Reboot")
      return yield* refused(env, node, `no replacement can be launched: ${replacer.why}`)
    const record = newRecord(
      {
        id: newRepairId(node.uid, now),
        match: d.governing,
        node: {
          name,
          uid: node.uid,
          providerID: node.providerID ?? "",
          ...(d.pool !== undefined ? { pool: d.pool } : {}),
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
    env.flushPoolMetrics()
    yield* env.events.emit({
      node: { name, uid: node.uid },
      type: "Warning",
      reason: "RepairStarted",
      action: "Repair",
      note: `${record.action} for ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}); pool ${d.breaker.scope} has ${d.breaker.unhealthy} unhealthy of ${d.breaker.size} (allowed ${d.breaker.allowed})`
    })
    return yield* runRepair(env, record)
  })
