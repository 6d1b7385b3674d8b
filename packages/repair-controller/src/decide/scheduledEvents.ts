/**
 * Planned repairs for the cloud's scheduled events (issue #42, ADR 0018). Pure: the caller passes the events the
 * cloud reported for the node's machine, the settings and the clock reading. An event that has not ended becomes a
 * plan: a repair of the controller's condition type `EC2ScheduledEvent` with the event's reason code
 * (`EC2InstanceRetirementScheduled`, ...), due `leadSeconds` before the event's NotBefore, or at the opening of the
 * pool's last maintenance window before that; it is decided like any other due repair (veto, zonal shift, breakers,
 * relapse hold, in-flight budget, dry-run: decide.ts takes it as one more match). A completed or cancelled event, or
 * one past its NotAfter, plans nothing, so the plan goes when the event does.
 */
import {
  type RepairAction,
  SCHEDULED_EVENT_ACTIONS,
  SCHEDULED_EVENT_CONDITION_TYPE,
  SCHEDULED_EVENT_REASONS
} from "@nodemend/reason-codes"
import { Cron, Result } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { ScheduledEvent } from "../domain/Instance.ts"
import { durationMs, parseSchedule } from "../config/cronSchedule.ts"
import type { PolicyMatch } from "./policyMatch.ts"

/** A pool's maintenance window: a cron schedule (UTC, as NodePool budgets) and how long each opening lasts. */
export interface MaintenanceWindow {
  readonly schedule: string
  readonly duration: string
}

export interface PlanSettings {
  /** How long before the event's NotBefore the repair is due (time to drain and bring up a replacement). */
  readonly leadMs: number
  readonly window?: MaintenanceWindow
}

/** Where the due time lies against the pool's maintenance window. */
export type WindowFit =
  | { readonly _tag: "NoWindow" }
  /** Due at the opening of the last window before the deadline (or now, inside it). */
  | { readonly _tag: "Inside"; readonly opens: number; readonly closes: number }
  /** No window opens between now and the deadline: due at the deadline anyway (EC2 acts then regardless). */
  | { readonly _tag: "NoneBeforeDeadline" }

export interface Plan {
  readonly event: ScheduledEvent
  readonly reason: string
  /** The latest time the repair should start: NotBefore - lead. */
  readonly deadline: number
  readonly dueAt: number
  readonly window: WindowFit
}

const ACTION_RANK: Record<RepairAction, number> = { Replace: 2, Reboot: 1, None: 0 }

/** Whether an event still plans a repair: not completed or cancelled, and not past its window. */
export const isLive = (e: ScheduledEvent, now: number): boolean =>
  e.ended === undefined && (e.notAfter === undefined || now < e.notAfter)

/** The latest hit of `cron` at or before `t`, if any. */
const lastHitAtOrBefore = (cron: Cron.Cron, t: number): number | undefined => {
  try {
    return Cron.prev(cron, new Date(t + 1)).getTime()
  } catch {
    return undefined
  }
}

/** When a repair due by `deadline` should start, given the pool's window. An invalid window counts as none. */
export const fitWindow = (
  deadline: number,
  window: MaintenanceWindow | undefined,
  now: number
): { readonly dueAt: number; readonly window: WindowFit } => {
  if (window === undefined) return { dueAt: deadline, window: { _tag: "NoWindow" } }
  const cron = parseSchedule(window.schedule)
  const d = durationMs(window.duration)
  if (Result.isFailure(cron) || d <= 0) return { dueAt: deadline, window: { _tag: "NoWindow" } }
  const opens = lastHitAtOrBefore(cron.success, deadline)
  if (opens === undefined || opens + d <= now)
    return { dueAt: deadline, window: { _tag: "NoneBeforeDeadline" } }
  return { dueAt: opens, window: { _tag: "Inside", opens, closes: opens + d } }
}

/** The event that governs a node's plan: the live one EC2 acts on first (ties: Replace before Reboot). */
export const planFor = (
  events: ReadonlyArray<ScheduledEvent>,
  settings: PlanSettings,
  now: number,
  actionOf: (reason: string, e: ScheduledEvent) => RepairAction = (_r, e) => SCHEDULED_EVENT_ACTIONS[e.code]
): Plan | undefined => {
  const live = events
    .filter((e) => isLive(e, now))
    .map((e) => ({ e, reason: SCHEDULED_EVENT_REASONS[e.code] }))
    .sort(
      (a, b) =>
        a.e.notBefore - b.e.notBefore ||
        ACTION_RANK[actionOf(b.reason, b.e)] - ACTION_RANK[actionOf(a.reason, a.e)]
    )
  const first = live[0]
  if (first === undefined) return undefined
  const deadline = first.e.notBefore - settings.leadMs
  return { event: first.e, reason: first.reason, deadline, ...fitWindow(deadline, settings.window, now) }
}

/** The plan's settings for a pool: the config's lead and the pool's maintenance window, if it has one. */
export const planSettings = (config: ControllerConfig, pool: string | undefined): PlanSettings => {
  const window = pool !== undefined ? config.scheduledEvents.maintenanceWindows[pool] : undefined
  return { leadMs: config.scheduledEvents.leadSeconds * 1000, ...(window !== undefined ? { window } : {}) }
}

/**
 * A node's plan from its machine's events: those no repair was started for (`acted`), under its pool's settings.
 * The one entry of the live controller (controller/plannedRepair.ts) and of the what-if replay (whatif/replay.ts),
 * so both plan alike. Nothing while `scheduledEvents.enabled` is off.
 */
export const nodePlan = (
  config: ControllerConfig,
  events: ReadonlyArray<ScheduledEvent>,
  acted: (eventId: string) => boolean,
  pool: string | undefined,
  now: number
): Plan | undefined => {
  if (!config.scheduledEvents.enabled) return undefined
  const open = events.filter((e) => !acted(e.id))
  if (open.length === 0) return undefined
  return planFor(open, planSettings(config, pool), now, (r, e) => plannedAction(config, r, e))
}

/** The match is a planned repair's (its condition type is the controller's, never a node's). */
export const isPlannedMatch = (m: PolicyMatch | undefined): boolean =>
  m?.conditionType === SCHEDULED_EVENT_CONDITION_TYPE

/** The action a reason gets: a `reasons.<reason>` override, else the event code's default. */
export const plannedAction = (config: ControllerConfig, reason: string, e: ScheduledEvent): RepairAction =>
  config.reasons[reason]?.action ?? SCHEDULED_EVENT_ACTIONS[e.code]

/**
 * The plan as one more policy match for decide.ts: due (its "toleration" over) at `dueAt`; knobs from
 * `reasons.<reason>`, else the drain and replacement defaults. It is built from the cloud's answer only, never from
 * a condition on the Node (which a node can write).
 */
export const plannedMatch = (config: ControllerConfig, plan: Plan): PolicyMatch => {
  const o = config.reasons[plan.reason]
  const action = plannedAction(config, plan.reason, plan.event)
  return {
    conditionType: SCHEDULED_EVENT_CONDITION_TYPE,
    status: "True",
    reason: plan.reason,
    message: planText(plan),
    lastTransitionTime: undefined,
    toleratedFrom: plan.dueAt,
    tolerationMs: 0,
    expiresAt: plan.dueAt,
    action,
    drainMode: o?.drainMode ?? config.drain.onDeadline,
    drainDeadlineMs: (o?.drainDeadlineSeconds ?? config.drain.deadlineSeconds) * 1000,
    captureLogs: o?.captureLogs ?? false,
    capacityFirst: o?.capacityFirst ?? config.replacement.capacityFirst,
    onNoCapacity: o?.onNoCapacity ?? config.replacement.onNoCapacity,
    actionSource: o?.action !== undefined ? "reason-override" : "catalog"
  }
}

const iso = (t: number) => new Date(t).toISOString()

/** The plan in words, for its Event and the match's message. */
export const planText = (plan: Plan): string => {
  const e = plan.event
  const span = `${iso(e.notBefore)}${e.notAfter !== undefined ? ` to ${iso(e.notAfter)}` : ""}`
  const w = plan.window
  const when =
    w._tag === "Inside"
      ? `due ${iso(plan.dueAt)}, in the maintenance window ${iso(w.opens)} to ${iso(w.closes)}`
      : w._tag === "NoneBeforeDeadline"
        ? `due ${iso(plan.dueAt)} (no maintenance window opens before then)`
        : `due ${iso(plan.dueAt)}`
  return `EC2 ${e.code} ${e.id} scheduled ${span}: ${when}`
}
