/**
 * Planned repairs (EC2 scheduled events, the repair controller's ADR 0018) as `kubectl nodemend status` and
 * `timeline` show them: read from the controller's journal (ConfigMap `nodemend-planned-repairs` in its namespace,
 * which only the controller writes), never from anything on the Node. Each plan: the event's code and id, its
 * NotBefore, when the repair is due to start, and what holds it once due. Pure.
 */
import type { ConfigMap } from "@nodemend/kube-access"
import { PLANNED_REPAIRS_CONFIGMAP, type PlanView, parsePlans } from "@nodemend/repair-controller"
import { Result } from "effect"

export { PLANNED_REPAIRS_CONFIGMAP }

/** The plans in the journal, soonest due first, or why they cannot be read (none when there is no ConfigMap). */
export const plansOf = (
  cm: ConfigMap | undefined
): { readonly plans: ReadonlyArray<PlanView>; readonly error?: string } => {
  const text = cm?.data?.plans
  if (text === undefined) return { plans: [] }
  const r = parsePlans(text)
  if (Result.isFailure(r)) return { plans: [], error: r.failure }
  return { plans: [...r.success].sort((a, b) => a.dueAt - b.dueAt || a.node.localeCompare(b.node)) }
}

const fmtTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** What the plan does now: waiting for its due time, or due and held (by what, and what lifts it). */
export const planState = (p: PlanView): string =>
  p.state === "held" ? `held: ${p.heldBy ?? "?"}` : `waiting until ${fmtTime(p.dueAt)}`

export const PLAN_HEADERS = ["NODE", "EVENT", "CODE", "NOT BEFORE", "REPAIR STARTS", "ACTION", "STATE"]

export const planRows = (plans: ReadonlyArray<PlanView>): string[][] =>
  plans.map((p) => [
    p.node,
    p.eventId,
    p.code,
    fmtTime(p.notBefore),
    fmtTime(p.dueAt),
    p.action,
    planState(p).slice(0, 200)
  ])

/** The node's plan as one timeline line (at when the controller last decided it). */
export const planTimelineText = (p: PlanView): string =>
  `${p.action} planned for ${p.code} ${p.eventId}: EC2 acts from ${fmtTime(p.notBefore)}, repair starts ${fmtTime(p.dueAt)}; ${planState(p)}`
