/**
 * How many repairs may be in flight at once in a pool, on top of the breaker: the breaker says whether a pool is
 * healthy enough to repair at all, the budget how much of it may be taken away at once, so a false positive at
 * exactly the breaker's limit never drains a fifth of a pool in one go. A Karpenter NodePool's own disruption
 * budgets bound it where they apply to repair (no reasons, or reason `Unhealthy`, as Karpenter v1.15 repairs
 * through them); otherwise the config's `maxInFlight` (default 10%, as Karpenter's default budget). A budget with
 * a schedule is taken as always active: it can only lower the bound, and a cron evaluation nodemend lacks must not
 * raise it (fail closed). Pure.
 */
import type { DisruptionBudget } from "../domain/NodePool.ts"

/** Int-or-percent (`"3"`, `"10%"`), percent rounded up against `size`, as Karpenter and PDBs do; undefined if bad. */
export const scaled = (value: string, size: number): number | undefined => {
  const m = /^(?:(100|[0-9]{1,2})%|([0-9]+))$/.exec(value.trim())
  if (m === null) return undefined
  return m[1] !== undefined ? Math.ceil((Number(m[1]) * size) / 100) : Number(m[2])
}

const appliesToRepair = (b: DisruptionBudget) =>
  b.reasons === undefined || b.reasons.length === 0 || b.reasons.includes("Unhealthy")

export interface InFlightBudget {
  readonly allowed: number
  /** Where the bound comes from, for events: `nodepool <name> budget "10%"` or `maxInFlight "10%"`. */
  readonly source: string
}

export const inFlightBudget = (args: {
  readonly scope: string
  readonly size: number
  readonly maxInFlight: string
  /** The Karpenter NodePool's budgets, when the pool is one. */
  readonly nodePoolBudgets?: ReadonlyArray<DisruptionBudget>
}): InFlightBudget => {
  const own = (args.nodePoolBudgets ?? []).filter(appliesToRepair)
  if (own.length > 0) {
    const bounds = own.map((b) => ({ b, n: scaled(b.nodes, args.size) }))
    // An unreadable budget allows nothing: Karpenter's API validation should have refused it.
    const tightest = bounds.reduce((min, x) => ((x.n ?? 0) < (min.n ?? 0) ? x : min))
    return {
      allowed: tightest.n ?? 0,
      source: `nodepool ${args.scope} disruption budget "${tightest.b.nodes}"${tightest.n === undefined ? " (unreadable)" : ""}`
    }
  }
  return { allowed: scaled(args.maxInFlight, args.size) ?? 0, source: `maxInFlight "${args.maxInFlight}"` }
}
