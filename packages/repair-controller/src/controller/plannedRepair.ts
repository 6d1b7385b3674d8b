/**
 * The reconcile's side of the planned repairs (decide/scheduledEvents.ts): the node's plan from the cloud's last
 * answer, its Events (RepairPlanned while it waits for its due time; ScheduledEventUnhandled when it is due and a
 * gate or budget holds it), and the gauges, recomputed on every refresh.
 */
import { REPAIR_PLANNED_REASON, SCHEDULED_EVENT_UNHANDLED_REASON } from "@nodemend/reason-codes"
import { Clock, Effect, Metric } from "effect"
import type { Decision } from "../decide/decide.ts"
import type { PolicyMatch } from "../decide/policyMatch.ts"
import {
  isLive,
  isPlannedMatch,
  nodePlan,
  type Plan,
  plannedAction,
  plannedMatch,
  planText
} from "../decide/scheduledEvents.ts"
import type { NodeRef, NodeView } from "../domain/NodeView.ts"
import type { PlanView } from "../domain/PlannedRepairs.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import { nodeRef } from "../kube/views.ts"
import * as M from "../observability/scheduledEventMetrics.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

/** The ports the planned repairs use (a repair for a scheduled event of its machine). */
export type PlanPorts = Pick<
  ControllerEnv,
  | "cache"
  | "config"
  | "events"
  | "inventory"
  | "owners"
  | "placements"
  | "plannedRepairs"
  | "scheduled"
  | "store"
>

/** The pool whose maintenance window applies: the proven one (owner proof, else fleet inventory), never a label. */
const provenPool = (env: PlanPorts, node: NodeView): string | undefined => {
  const proof = env.placements.of(node)
  if (proof._tag === "Proven") return proof.pool
  const located = env.inventory.of(node)
  return located._tag === "Proven" ? located.pool : undefined
}

/** A Node that Karpenter registered to one of its NodeClaims (Karpenter alone writes `status.nodeName`). */
const karpenters = (env: PlanPorts, node: NodeView) => env.owners.pools.registered(node)

/** The node's plan, if its machine has a live scheduled event no repair was started for and it is nodemend's. */
export const planOf = (env: PlanPorts, node: NodeView, now: number): Plan | undefined => {
  const events = env.scheduled.of(node.name)
  // Most machines have none: nothing else to ask (every node is asked at every decision and every refresh).
  if (events.length === 0) return undefined
  if (env.config.scheduledEvents.karpenterInterruptionQueue && karpenters(env, node)) return undefined
  // The window is the pool's as the cloud proved it: until proven, none (due at NotBefore - lead).
  return nodePlan(env.config, events, env.plannedRepairs.acted, provenPool(env, node), now)
}

/**
 * A Karpenter node's scheduled events left to Karpenter's interruption queue (`karpenterInterruptionQueue`):
 * one Event per event, so the deferral is visible where a plan would be.
 */
export const reportDeferredToKarpenter = (env: PlanPorts, node: NodeView, now: number) =>
  Effect.gen(function* () {
    const c = env.config.scheduledEvents
    if (!c.enabled || !c.karpenterInterruptionQueue || !karpenters(env, node)) return
    for (const e of env.scheduled.of(node.name)) {
      if (env.plannedRepairs.acted(e.id) || !isLive(e, now)) continue
      yield* env.events.emitDeduped(`${node.name}/KarpenterInterruption/${e.id}`, EVENT_DEDUPE_MS, {
        node: { name: node.name, uid: node.uid },
        type: "Normal",
        reason: "RepairDeferred",
        action: "Plan",
        note: `not planning a repair for ${e.code} (${e.id}, from ${new Date(e.notBefore).toISOString()}): Karpenter's interruption queue handles its nodes' scheduled events (scheduledEvents.karpenterInterruptionQueue)`.slice(
          0,
          1000
        )
      })
    }
  })

export const matchOf = (env: PlanPorts, plan: Plan | undefined): PolicyMatch | undefined =>
  plan === undefined ? undefined : plannedMatch(env.config, plan)

/** What holds a due plan, in words, with what lifts it (the decision's own Event says more). */
export const heldBy = (d: Decision): string => {
  switch (d._tag) {
    case "Queued":
      return `budget: ${d.inFlight} in flight${d.failed > 0 ? ` (${d.failed} failed)` : ""}, allowed ${d.budget.allowed} by ${d.budget.source}; starts when a slot frees`
    case "Blocked":
      return `breaker: ${d.breaker.unhealthy} of ${d.breaker.size} unhealthy in ${d.breaker.scope}, allowed ${d.breaker.allowed}; starts when fewer are`
    case "Held":
      return `relapse hold of ${d.held.reason}: lifts at ${new Date(d.held.until).toISOString()} or with kubectl nodemend release`
    case "Vetoed":
      return `veto: ${d.veto}; starts when it is lifted`
    case "StandDown":
    case "ZoneStandDown":
      return "stand-down (zonal shift or zone breaker); starts when it ends"
    case "Unsettled":
      return `waiting for placement proofs: ${d.why}`
    case "Unplaced":
      return `refused: machine not proven: ${d.why}`
    case "WouldRepair":
      return "dry-run: would start now"
    default:
      return d._tag
  }
}

/** The plan as `kubectl nodemend status` and `timeline` read it, for a decision that does not start its repair. */
const planView = (
  node: NodeView,
  plan: Plan,
  d: Decision,
  governing: PolicyMatch,
  now: number
): PlanView => ({
  node: node.name,
  eventId: plan.event.id,
  code: plan.event.code,
  reason: plan.reason,
  action: governing.action,
  notBefore: plan.event.notBefore,
  ...(plan.event.notAfter !== undefined ? { notAfter: plan.event.notAfter } : {}),
  dueAt: plan.dueAt,
  ...(d._tag === "Tolerating"
    ? { state: "waiting" as const }
    : { state: "held" as const, heldBy: heldBy(d) }),
  text: planText(plan),
  at: now
})

/** The plan's Events (and its journaled view) for a decision that does not start its repair. */
export const reportPlan = (
  env: PlanPorts,
  node: NodeView,
  plan: Plan | undefined,
  d: Decision,
  now: number
) =>
  Effect.gen(function* () {
    if (plan === undefined || !("governing" in d) || !isPlannedMatch(d.governing)) {
      // No plan, or another fault governs the node: its own repair's Events say what happens.
      env.plannedRepairs.setPlan(node.name, undefined)
      return
    }
    env.plannedRepairs.setPlan(node.name, planView(node, plan, d, d.governing, now))
    const ref = { name: node.name, uid: node.uid }
    if (d._tag === "Tolerating")
      return yield* env.events.emitDeduped(
        `${node.name}/Planned/${plan.event.id}/${plan.dueAt}`,
        EVENT_DEDUPE_MS,
        {
          node: ref,
          type: "Normal",
          reason: REPAIR_PLANNED_REASON,
          action: "Plan",
          note: `${d.governing.action} planned for ${plan.reason}: ${planText(plan)}`.slice(0, 1000)
        }
      )
    if (d._tag === "Repair" || now < plan.dueAt) return
    yield* env.events.emitDeduped(`${node.name}/Unhandled/${plan.event.id}`, EVENT_DEDUPE_MS, {
      node: ref,
      type: "Warning",
      reason: SCHEDULED_EVENT_UNHANDLED_REASON,
      action: "Plan",
      note: `the repair planned for ${plan.reason} is due and not started (${d._tag}); EC2 acts from ${new Date(plan.event.notBefore).toISOString()}: ${planText(plan)}`.slice(
        0,
        1000
      )
    })
  })

/**
 * Journals the event a started repair is for, once its record is written (startRepair's `recorded`,
 * PlannedRepairStore.ts): it is not planned again, after a restart too. A repair refused or deferred wrote no record
 * and leaves the event planned. A failed write is logged: the repair goes on, and its event may be planned once more
 * after it (the safe side: never a plan forgotten).
 */
export const markStarted = (
  env: PlanPorts,
  record: RepairRecord,
  plan: Plan | undefined,
  governing: PolicyMatch,
  now: number
): Effect.Effect<void> => {
  if (plan === undefined || !isPlannedMatch(governing)) return Effect.void
  const e = plan.event
  const mark = {
    eventId: e.id,
    node: record.node.name,
    code: e.code,
    notBefore: e.notBefore,
    ...(e.notAfter !== undefined ? { notAfter: e.notAfter } : {}),
    repairId: record.id,
    at: now
  }
  return env.plannedRepairs.markActed(mark, now).pipe(
    Effect.catch((err) =>
      Effect.logWarning("could not journal the scheduled event a repair started for", {
        node: record.node.name,
        event: e.id,
        error: err.message
      })
    )
  )
}

/** The gauges of the plans: nodes with a plan and no repair yet, and those of them already due. */
const gaugePlans = (env: PlanPorts, now: number) =>
  Effect.suspend(() => {
    let planned = 0
    let unhandled = 0
    // Only the nodes the cloud named: planOf has nothing for the others.
    for (const name of env.scheduled.names()) {
      const view = env.cache.view(name)
      if (view === undefined || env.store.get(name)._tag === "Record") continue
      const plan = planOf(env, view, now)
      if (plan === undefined || plannedAction(env.config, plan.reason, plan.event) === "None") continue
      planned++
      if (now >= plan.dueAt) unhandled++
    }
    return Metric.update(M.plannedRepairs, planned).pipe(
      Effect.andThen(Metric.update(M.scheduledEventsUnhandled, unhandled))
    )
  })

/** The refresh loop the controller forks: ask the cloud, wake the changed nodes, write the gauges; every period. */
export const scheduledEventLoop = (env: PlanPorts) =>
  Effect.forever(
    Clock.currentTimeMillis.pipe(
      Effect.tap((now) => env.scheduled.refresh(now).pipe(Effect.andThen(gaugePlans(env, now)))),
      Effect.andThen(Effect.sleep(`${env.config.scheduledEvents.refreshSeconds} seconds`))
    )
  )

/** The watch for a controller: every cached Node is asked about. */
export const nodesToAsk = (env: Pick<ControllerEnv, "cache">): ReadonlyArray<NodeRef> => {
  const out: NodeRef[] = []
  for (const v of env.cache.views()) if (!v.deleting) out.push(nodeRef(v))
  return out
}
