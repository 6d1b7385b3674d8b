/**
 * The Event (and requeue) for every decision that does not start a repair, and the pool-wide Event on the pool's
 * NodePool where there is one (poolEvents.ts). Given only the ports it uses.
 */
import { Clock, Effect, Metric } from "effect"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import type { Decision } from "../decide/decide.ts"
import { escalationText } from "../decide/escalation.ts"
import { placeText } from "../decide/order.ts"
import { holdText } from "../decide/relapse.ts"
import { vetoOf } from "../decide/veto.ts"
import { standDownKey, standDownPoolNote } from "../decide/zonalShiftGate.ts"
import { zoneText } from "../decide/zoneBreaker.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import * as M from "../observability/metrics.ts"
import { metricReason } from "../observability/seriesBounds.ts"
import { PRE_PROOF_LEAD_MS } from "../owner/PreProofs.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import { poolEvent } from "./poolEvents.ts"

export type ReportPorts = Pick<
  ControllerEnv,
  "config" | "events" | "queue" | "preProofs" | "store" | "blocked" | "waiting" | "owners"
>

const standDownWhy = (d: Extract<Decision, { _tag: "StandDown" }>) =>
  d.gate.cause === "shift"
    ? `a ${d.gate.shift.kind} away from ${d.gate.shift.zone ?? d.gate.shift.zoneId ?? "a zone"} is active until ${d.gate.shift.expiresAt.toISOString()}`
    : `the cloud provider cannot say whether a zonal shift is active (${d.gate.error}); failing closed`

/** What a queued node's Event says of failed repairs holding its pool's slots: they hold them until someone acts. */
const heldByFailed = (env: ReportPorts, d: Extract<Decision, { _tag: "Queued" }>) => {
  if (d.failed === 0) return ""
  const names = env.store.failedIn(d.scope === CLUSTER_SCOPE ? undefined : d.scope)
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "")
  return `; ${d.failed} of them FAILED and hold their slot until an operator acts (${shown}): kubectl nodemend retry <node> to repair it again, or kubectl nodemend abandon <node> to give it up`
}

/** The Event (and requeue) for every decision that does not start a repair. */
export const reportDecision = (
  env: ReportPorts,
  node: NodeView,
  d: Exclude<Decision, { _tag: "Repair" }>,
  /** The node's proven pool: its NodePool gets the pool-wide Events (poolEvents.ts). */
  pool: string | undefined
) =>
  Effect.gen(function* () {
    const name = node.name
    const ref = { name, uid: node.uid }
    const event = (key: string, type: "Normal" | "Warning", reason: string, note: string) =>
      env.events.emitDeduped(`${name}/${key}`, EVENT_DEDUPE_MS, {
        node: ref,
        type,
        reason,
        action: "Decide",
        note
      })
    switch (d._tag) {
      case "Healthy":
        return
      case "Tolerating": {
        if (d.requeueAfterMs === undefined) return
        // Shortly before the expiry the cloud is asked who the machine is (PreProofs.ts), so the decision at the
        // expiry need not wait for it: woken PRE_PROOF_LEAD_MS early for that, then again at the expiry.
        if (d.requeueAfterMs > PRE_PROOF_LEAD_MS) {
          env.queue.addAfter(name, d.requeueAfterMs - PRE_PROOF_LEAD_MS)
          return
        }
        if (wouldAct(env, node)) yield* env.preProofs.prepare(node)
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      }
      case "ReportOnly":
        return yield* event(
          `ReportOnly/${d.matches.map((m) => m.reason).join(",")}`,
          "Warning",
          "UnhealthyNotRepaired",
          `policy action is None for ${d.matches.map((m) => `${m.conditionType}=${m.status} (${m.reason})`).join(", ")}`
        )
      case "Vetoed":
        return yield* event(
          `Vetoed/${d.veto}`,
          "Normal",
          "RepairVetoed",
          `${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}) is past its toleration, but repair is vetoed: ${d.veto}`
        )
      case "StandDown":
        yield* event(
          `StandDown/${d.gate.cause}`,
          "Warning",
          "RepairStandDown",
          `repair of ${d.governing.conditionType}=${d.governing.status} stands down: ${standDownWhy(d)}`
        )
        yield* poolEvent(
          env,
          pool,
          standDownKey(d.gate),
          "Warning",
          "RepairStandDown",
          standDownPoolNote(env.config, d.gate)
        )
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      case "Unsettled":
        // Seconds at most (a proof's answer wakes the pool's held-back nodes): a log line, not an Event.
        yield* Effect.logDebug("decision waits for placement proofs", { node: name, why: d.why })
        if (d.scope !== undefined) env.blocked.block(name, d.scope)
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      case "Unplaced":
        yield* Metric.update(Metric.withAttributes(M.repairsRefused, { cause: "identity" }), 1)
        return yield* event(
          `Unplaced`,
          "Warning",
          "RepairRefused",
          `not repairing ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}): its machine is not proven to be this node, so it has no pool: ${d.why}`.slice(
            0,
            1000
          )
        )
      case "ZoneStandDown":
        yield* event(
          `StandDown/zone/${d.zone.cause}`,
          "Warning",
          "RepairStandDown",
          `repair of ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}) stands down: ${zoneText(d.zone)}`
        )
        yield* poolEvent(
          env,
          pool,
          `StandDown/zone/${d.zone.cause}/${d.zone.cause === "concentrated" ? d.zone.zone.zone : ""}`,
          "Warning",
          "RepairStandDown",
          `repairs of nodes of this NodePool stand down: ${zoneText(d.zone)}`
        )
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      case "Held": {
        const scope = d.scope === CLUSTER_SCOPE ? "the cluster" : `pool ${d.scope}`
        const release = `kubectl nodemend release ${d.scope === CLUSTER_SCOPE ? "'<cluster>'" : d.scope} ${d.held.reason}`
        yield* event(
          `Held/${d.scope}/${d.held.reason}`,
          "Warning",
          "RepairHeld",
          `repair of ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}) in ${scope} is held since ${new Date(d.held.hold.since).toISOString()}: ${holdText(d.held)}. It lifts at ${new Date(d.held.until).toISOString()} if nothing relapses before, or now with ${release}`
        )
        yield* poolEvent(
          env,
          d.scope,
          `Held/${d.held.reason}`,
          "Warning",
          "RepairHeld",
          `repairs of ${d.held.reason} in this NodePool are held since ${new Date(d.held.hold.since).toISOString()}: ${holdText(d.held)}. It lifts at ${new Date(d.held.until).toISOString()} if nothing relapses before, or now with ${release}`
        )
        yield* Metric.update(
          Metric.withAttributes(M.repairsHeld, {
            pool: d.scope,
            reason: metricReason(env.config, d.held.reason)
          }),
          1
        )
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      }
      case "Blocked": {
        const b = d.breaker
        yield* event(
          "Blocked",
          "Warning",
          "RepairBlocked",
          `more than ${b.percent}% of nodes are unhealthy in ${b.scope === "<cluster>" ? "the cluster" : `nodepool ${b.scope}`} (${b.unhealthy} of ${b.size}, allowed ${b.allowed})`
        )
        yield* poolEvent(
          env,
          b.scope,
          "Blocked",
          "Warning",
          "RepairBlocked",
          `more than ${b.percent}% of the nodes of this NodePool are unhealthy (${b.unhealthy} of ${b.size}, allowed ${b.allowed}): repairs are blocked until fewer are`
        )
        yield* Effect.logWarning("breaker open: repair blocked", {
          node: name,
          pool: b.scope,
          unhealthy: b.unhealthy,
          size: b.size,
          allowed: b.allowed
        })
        // Woken as soon as its pool's count drops (BlockedNodes); the requeue is the backstop.
        env.blocked.block(name, b.scope)
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      }
      case "Queued":
        // Held by a failed repair is news an operator must act on: a Warning, not deduplicated with plain waiting.
        yield* event(
          d.failed > 0 ? "Queued/failed" : "Queued",
          d.failed > 0 ? "Warning" : "Normal",
          "RepairQueued",
          `${d.governing.conditionType}=${d.governing.status} (${d.governing.reason}) is due; waiting for a slot: ${d.inFlight} repairs in flight in ${d.scope === "<cluster>" ? "the cluster" : `pool ${d.scope}`}, allowed ${d.budget.allowed} by ${d.budget.source}${heldByFailed(env, d)}; queue ${placeText(d.waiting, d.place)}`
        )
        yield* poolEvent(
          env,
          d.scope,
          d.failed > 0 ? "Queued/failed" : "Queued",
          d.failed > 0 ? "Warning" : "Normal",
          "RepairQueued",
          `due repairs wait for a slot: ${d.inFlight} repairs in flight in this NodePool, allowed ${d.budget.allowed} by ${d.budget.source}${heldByFailed(env, d)}`
        )
        yield* Metric.update(Metric.withAttributes(M.repairsQueued, { pool: d.scope }), 1)
        env.waiting.put(d.scope, d.waiting, yield* Clock.currentTimeMillis)
        // Woken when a repair in its pool ends (the count eases); the requeue is the backstop.
        env.blocked.block(name, d.scope)
        env.queue.addAfter(name, d.requeueAfterMs)
        return
      case "WouldRepair":
        yield* Metric.update(
          Metric.withAttributes(M.wouldRepair, {
            condition: d.governing.conditionType,
            reason: metricReason(env.config, d.governing.reason)
          }),
          1
        )
        return yield* env.events.emitDeduped(`${name}/WouldRepair`, EVENT_DEDUPE_MS, {
          node: ref,
          type: "Normal",
          reason: "WouldRepair",
          action: "Decide",
          note: `dry-run: would ${d.governing.action} for ${d.governing.conditionType}=${d.governing.status} (${d.governing.reason})${d.escalation !== undefined ? `; ${escalationText(d.escalation, d.governing)}` : ""}`.slice(
            0,
            1000
          )
        })
    }
  })

/** The NodePool of the node's proven pool (its label's only to decide whether to ask the cloud ahead: wouldAct). */
export const nodePoolOf = (
  env: Pick<ControllerEnv, "config" | "owners">,
  node: NodeView,
  placement?: Placement
) => {
  const pool =
    placement === undefined
      ? node.labels[env.config.poolLabel]
      : placement._tag === "Proven"
        ? placement.pool
        : undefined
  const facts = env.owners.pools.facts(pool)
  return facts !== undefined ? { nodePool: facts } : {}
}

/** Whether an expiry of this node could start a repair at all (not dry-run, not vetoed): worth asking the cloud. */
const wouldAct = (env: Pick<ControllerEnv, "config" | "owners">, node: NodeView) =>
  !env.config.dryRun &&
  vetoOf(env.config, node) === undefined &&
  nodePoolOf(env, node).nodePool?.vetoed !== true
