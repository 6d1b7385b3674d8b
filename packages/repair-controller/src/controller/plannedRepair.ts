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
import type { NodeView } from "../domain/NodeView.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import { nodeRef } from "../kube/views.ts"
import * as M from "../observability/scheduledEventMetrics.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

/** The pool whose maintenance window applies: the proven one (owner proof, else fleet inventory), never a label. */
const provenPool = (env: ControllerEnv, node: NodeView): string | undefined => {
  const proof = env.placements.of(node)
  if (proof._tag === "Proven") return proof.pool
  const located = env.inventory.of(node)
  return located._tag === "Proven" ? located.pool : undefined
}

/** A Node that Karpenter registered to one of its NodeClaims (Karpenter alone writes `status.nodeName`). */
const karpenters = (env: ControllerEnv, node: NodeView) =>
  env.karpenter.claimOf(node.providerID)?.status?.nodeName === node.name

/** The node's plan, if its machine has a live scheduled event no repair was started for and it is nodemend's. */
export const planOf = (env: ControllerEnv, node: NodeView, now: number): Plan | undefined => {
  if (env.config.scheduledEvents.karpenterInterruptionQueue && karpenters(env, node)) return undefined
  // The window is the pool's as the cloud proved it: until proven, none (due at NotBefore - lead).
  return nodePlan(env.config, env.scheduled.of(node.name), env.scheduled.acted, provenPool(env, node), now)
}

/**
 * A Karpenter node's scheduled events left to Karpenter's interruption queue (`karpenterInterruptionQueue`):
 * one Event per event, so the deferral is visible where a plan would be.
 */
export const reportDeferredToKarpenter = (env: ControllerEnv, node: NodeView, now: number) =>
  Effect.gen(function* () {
    const c = env.config.scheduledEvents
    if (!c.enabled || !c.karpenterInterruptionQueue || !karpenters(env, node)) return
    for (const e of env.scheduled.of(node.name)) {
      if (env.scheduled.acted(e.id) || !isLive(e, now)) continue
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

export const matchOf = (env: ControllerEnv, plan: Plan | undefined): PolicyMatch | undefined =>
  plan === undefined ? undefined : plannedMatch(env.config, plan)

/** The plan's Events for a decision that does not start its repair. */
export const reportPlan = (
  env: ControllerEnv,
  node: NodeView,
  plan: Plan | undefined,
  d: Decision,
  now: number
) =>
  Effect.gen(function* () {
    if (plan === undefined || !("governing" in d) || !isPlannedMatch(d.governing)) return
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

/** Marks the event a started repair is for: it is not planned again (see ScheduledEventWatch.acted). */
export const markStarted = (env: ControllerEnv, plan: Plan | undefined, governing: PolicyMatch) => {
  if (plan !== undefined && isPlannedMatch(governing)) env.scheduled.markActed(plan.event.id)
}

/** The gauges of the plans: nodes with a plan and no repair yet, and those of them already due. */
const gaugePlans = (env: ControllerEnv, now: number) =>
  Effect.suspend(() => {
    let planned = 0
    let unhandled = 0
    for (const name of env.cache.names()) {
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
export const scheduledEventLoop = (env: ControllerEnv) =>
  Effect.forever(
    Clock.currentTimeMillis.pipe(
      Effect.tap((now) => env.scheduled.refresh(now).pipe(Effect.andThen(gaugePlans(env, now)))),
      Effect.andThen(Effect.sleep(`${env.config.scheduledEvents.refreshSeconds} seconds`))
    )
  )

/** The watch for a controller: every cached Node is asked about. */
export const nodesToAsk = (env: Pick<ControllerEnv, "cache">) =>
  env.cache.names().flatMap((name) => {
    const v = env.cache.view(name)
    return v === undefined || v.deleting ? [] : [nodeRef(v)]
  })
