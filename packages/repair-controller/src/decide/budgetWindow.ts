/**
 * When a Karpenter NodePool disruption budget is active, read as Karpenter reads it (kubernetes-sigs/karpenter
 * pkg/apis/v1/nodepool.go at 2266468, `Budget.IsActive`, `GetAllowedDisruptions`, `GetAllowedDisruptionsByReason`,
 * and the CRD patterns on `Budget`): a budget without `schedule` and `duration` is always active; one with both is
 * active while the most recent hit of its cron schedule (5 fields, or a macro, always in UTC: robfig/cron's
 * `ParseStandard` behind `TZ=UTC`) is less than `duration` ago, i.e. on `[hit, hit + duration)`. A budget the
 * NodePool CRD or the cron parser refuses is invalid: Karpenter allows 0 for every reason then, and so do we.
 * Cron expressions are parsed by Effect's `Cron`; where robfig differs (day-of-month/day-of-week "and", `?`,
 * weekday 7) robfig's rule is applied; a step above a field's maximum (90 minutes), which robfig takes and Effect
 * refuses, fails closed. Pure (the memos only remember answers): `now` is the caller's.
 */
import { Cron, Result } from "effect"
import { DURATION, durationMs, memo, NODES, parseSchedule, SCHEDULE } from "../config/cronSchedule.ts"
import type { DisruptionBudget } from "../domain/NodePool.ts"

const windowEnds = memo<{ readonly until: number | undefined }>(512)
const nextHits = memo<{ readonly at: number | undefined }>(512)

/** How far ahead a window's end is looked for (a window that lasts longer is reported as without end). */
const HORIZON_MS = 35 * 24 * 3_600_000
const MAX_EXTENSIONS = 200

export type BudgetState =
  /** `until`: when a scheduled budget's window ends (its hits back to back), if within the horizon. */
  | { readonly _tag: "Active"; readonly until?: number }
  | { readonly _tag: "Inactive" }
  | { readonly _tag: "Invalid"; readonly why: string }

/** A hit strictly after (or before) `t`, or undefined where there is none (Effect throws, robfig returns zero). */
const hit = (step: typeof Cron.next, cron: Cron.Cron, t: number): number | undefined => {
  try {
    return step(cron, new Date(t)).getTime()
  } catch {
    return undefined
  }
}

/**
 * The hit strictly after `t`. Hits fall on whole minutes, so it is the same for every `t` of a minute: one search
 * per schedule and minute, whatever the number of nodes decided in it.
 */
const firstHit = (schedule: string, cron: Cron.Cron, t: number): number | undefined =>
  nextHits(`${schedule}\n${Math.floor(t / 60_000)}`, () => ({ at: hit(Cron.next, cron, t) })).at

/** Whether the budget is active at `now`, and until when; why it is invalid where Karpenter would refuse it. */
export const budgetState = (b: DisruptionBudget, now: number): BudgetState => {
  if (!NODES.test(b.nodes))
    return { _tag: "Invalid", why: `nodes "${b.nodes}" is not a count or a percentage` }
  if (b.schedule === undefined && b.duration === undefined) return { _tag: "Active" }
  if (b.schedule === undefined || b.duration === undefined)
    return { _tag: "Invalid", why: "'schedule' must be set with 'duration'" }
  if (!DURATION.test(b.duration))
    return { _tag: "Invalid", why: `duration "${b.duration}" is not minutes and hours (e.g. 8h, 1h30m)` }
  if (!SCHEDULE.test(b.schedule))
    return { _tag: "Invalid", why: `schedule "${b.schedule}" is not a cron expression` }
  const parsed = parseSchedule(b.schedule)
  if (Result.isFailure(parsed)) return { _tag: "Invalid", why: `schedule "${b.schedule}": ${parsed.failure}` }
  const cron = parsed.success
  const d = durationMs(b.duration)
  // Karpenter: active iff the schedule's next hit after now - duration is not after now.
  const first = firstHit(b.schedule, cron, now - d)
  // robfig answers a schedule that never fires with the zero time, which is "not after now": always active.
  if (first === undefined) return { _tag: "Active" }
  if (first > now) return { _tag: "Inactive" }
  // One answer per window (its first hit): every node of the pool asks within it.
  const { until } = windowEnds(`${b.schedule}\n${d}\n${first}`, () => ({ until: windowEnd(cron, d, first) }))
  return until === undefined ? { _tag: "Active" } : { _tag: "Active", until }
}

/** The window ends `d` after its last hit; a hit at or before that end carries it on. */
const windowEnd = (cron: Cron.Cron, d: number, first: number): number | undefined => {
  let last = first
  for (let i = 0; i < MAX_EXTENSIONS && last + d - first <= HORIZON_MS; i++) {
    const latest = hit(Cron.prev, cron, last + d + 1)
    if (latest === undefined || latest <= last) return last + d
    last = latest
  }
  return undefined
}

/** Int-or-percent (`"3"`, `"10%"`), percent rounded up against `size`, as Karpenter and PDBs do; undefined if bad. */
export const scaled = (value: string, size: number): number | undefined => {
  const m = /^(?:(100|[0-9]{1,2})%|([0-9]+))$/.exec(value.trim())
  if (m === null) return undefined
  return m[1] !== undefined ? Math.ceil((Number(m[1]) * size) / 100) : Number(m[2])
}

/** Whether a budget bounds repair: no reasons, or reason `Unhealthy` (Karpenter v1.15 repairs through them). */
const appliesToRepair = (b: DisruptionBudget) =>
  b.reasons === undefined || b.reasons.length === 0 || b.reasons.includes("Unhealthy")

/** The NodePool's bound on repairs at `now`, and the budget that sets it. */
export interface NodePoolBound {
  readonly allowed: number
  readonly budget: DisruptionBudget
  /** Set when the budget is one Karpenter's validation would refuse: the bound is 0 until it is fixed. */
  readonly invalid?: string
  /** When the budget's window ends, for a scheduled budget (epoch ms). */
  readonly until?: number
}

/**
 * `GetAllowedDisruptionsByReason` for repair, as `MustGetAllowedDisruptions` takes it: an invalid budget (of any
 * reason, as Karpenter's) allows 0; else the tightest active budget that applies to repair, where among equals the
 * one that holds longest is named (no window end, else the latest). Undefined when none is active: Karpenter is
 * unbounded then, the caller falls back to its own bound.
 */
export const nodePoolBound = (
  budgets: ReadonlyArray<DisruptionBudget>,
  size: number,
  now: number
): NodePoolBound | undefined => {
  const states = budgets.map((budget) => ({ budget, state: budgetState(budget, now) }))
  for (const { budget, state } of states)
    if (state._tag === "Invalid") return { allowed: 0, budget, invalid: state.why }
  let best: NodePoolBound | undefined
  for (const { budget, state } of states) {
    if (state._tag !== "Active" || !appliesToRepair(budget)) continue
    const x: NodePoolBound = {
      allowed: scaled(budget.nodes, size) ?? 0,
      budget,
      ...(state.until !== undefined ? { until: state.until } : {})
    }
    if (
      best === undefined ||
      x.allowed < best.allowed ||
      (x.allowed === best.allowed && holdsLonger(x, best))
    )
      best = x
  }
  return best
}

const holdsLonger = (x: NodePoolBound, y: NodePoolBound) =>
  y.until !== undefined && (x.until === undefined || x.until > y.until)

/** A budget as an Event names it: `"0" (schedule "0 9 * * 1-5", duration 8h)`. */
export const budgetText = (b: DisruptionBudget): string => {
  const window = [
    ...(b.schedule !== undefined ? [`schedule "${b.schedule}"`] : []),
    ...(b.duration !== undefined ? [`duration ${b.duration}`] : [])
  ]
  return `"${b.nodes}"${window.length > 0 ? ` (${window.join(", ")})` : ""}`
}
