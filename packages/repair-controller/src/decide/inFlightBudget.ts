/**
 * How many repairs may be in flight at once in a pool, on top of the breaker: the breaker says whether a pool is
 * healthy enough to repair at all, the budget how much of it may be taken away at once, so a false positive at
 * exactly the breaker's limit never drains a fifth of a pool in one go. A Karpenter NodePool's own disruption
 * budgets bound it where they apply to repair (no reasons, or reason `Unhealthy`, as Karpenter v1.15 repairs
 * through them) and are active at `now`: a budget with a `schedule` only inside its window, read as Karpenter
 * reads it (UTC cron, its macros, `duration`: decide/budgetWindow.ts). Where none is active, the config's
 * `maxInFlight` (default 10%, as Karpenter's default budget). A budget Karpenter's validation would refuse allows
 * nothing (fail closed, as Karpenter does), and the source says which and why. Pure: `now` is the caller's.
 */
import type { DisruptionBudget } from "../domain/NodePool.ts"
import { budgetText, nodePoolBound, scaled } from "./budgetWindow.ts"

export { scaled }

/** `2026-12-07T17:00:00Z`: window ends fall on whole minutes. */
const isoTime = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, "Z")

export interface InFlightBudget {
  readonly allowed: number
  /**
   * Where the bound comes from, for events: `maxInFlight "10%"`, `nodepool <name> disruption budget "10%"`, or a
   * scheduled one with its window's end: `... budget "0" (schedule "0 9 * * 1-5", duration 8h) active until <time>`.
   */
  readonly source: string
  /** When the bound's scheduled budget stops being active (epoch ms): a held repair is looked at again then. */
  readonly until?: number
}

export const inFlightBudget = (args: {
  readonly scope: string
  readonly size: number
  readonly maxInFlight: string
  /** The Karpenter NodePool's budgets, when the pool is one. */
  readonly nodePoolBudgets?: ReadonlyArray<DisruptionBudget>
  readonly now: number
}): InFlightBudget => {
  const own = nodePoolBound(args.nodePoolBudgets ?? [], args.size, args.now)
  if (own === undefined)
    return { allowed: scaled(args.maxInFlight, args.size) ?? 0, source: `maxInFlight "${args.maxInFlight}"` }
  const named = `nodepool ${args.scope} disruption budget ${budgetText(own.budget)}`
  if (own.invalid !== undefined)
    return {
      allowed: 0,
      source: `${named}, which Karpenter's validation refuses (${own.invalid}): no repairs until the NodePool's budget is fixed`
    }
  if (own.until === undefined) return { allowed: own.allowed, source: named }
  return { allowed: own.allowed, source: `${named} active until ${isoTime(own.until)}`, until: own.until }
}
