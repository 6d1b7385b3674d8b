/**
 * The per-pool breaker. Pool = value of the configured label; nodes without it are judged against the
 * whole cluster, as Karpenter does for standalone NodeClaims. Unhealthy = any policy matching (toleration
 * ignored) or a repair in progress (the journal's, counted by `PoolCounter`). Allowed = ceil(percent x size); repair proceeds iff unhealthy <= allowed.
 * It is a breaker, not a rate limiter: under the limit every due node is repaired, over it none.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import { matchesAnyPolicy } from "./policyMatch.ts"

/** The scope name used for nodes without the pool label. */
export const CLUSTER_SCOPE = "<cluster>"

export interface ScopeCount {
  readonly size: number
  readonly unhealthy: number
  /** Repairs in flight (the journal's), for the in-flight budget; failed ones included (they hold their slot). */
  readonly repairing: number
  /** Of those, repairs that failed and wait for an operator (`kubectl nodemend retry|abandon`). */
  readonly failed: number
}

export interface PoolStats {
  readonly pools: ReadonlyMap<string, ScopeCount>
  readonly cluster: ScopeCount
  /** Per zone (`topology.kubernetes.io/zone`), across pools: the failure-domain breaker's counts. */
  readonly zones?: ReadonlyMap<string, { readonly size: number; readonly unhealthy: number }>
  /**
   * Unhealthy nodes whose placement is not proven yet, each with the pool and zone its labels claim. They count in
   * the cluster only; a decision they could change waits for their proofs (decide.ts `Unsettled`).
   */
  readonly unproven?: ReadonlyArray<{ readonly pool: string | undefined; readonly zone: string | undefined }>
}

export const poolOf = (config: ControllerConfig, node: NodeView): string | undefined => {
  const v = node.labels[config.poolLabel]
  return v === undefined || v === "" ? undefined : v
}

/** The pool and zone a node's labels claim, taken as proven: for what-if replays and tests, never the live controller. */
export const labelPlacement = (config: ControllerConfig, node: NodeView): Placement => {
  const zone = node.labels[ZONE_LABEL]
  return { _tag: "Proven", pool: poolOf(config, node), zone: zone === "" ? undefined : zone }
}

/** The counts as they would be if every unproven node were where its labels claim (decide.ts compares both). */
export const withUnproven = (stats: PoolStats): PoolStats => {
  if (stats.unproven === undefined || stats.unproven.length === 0) return stats
  const pools = new Map(stats.pools)
  const zones = new Map(stats.zones ?? [])
  for (const u of stats.unproven) {
    if (u.pool !== undefined) {
      const p = pools.get(u.pool) ?? { size: 0, unhealthy: 0, repairing: 0, failed: 0 }
      pools.set(u.pool, { ...p, size: p.size + 1, unhealthy: p.unhealthy + 1 })
    }
    if (u.zone !== undefined) {
      const z = zones.get(u.zone) ?? { size: 0, unhealthy: 0 }
      zones.set(u.zone, { size: z.size + 1, unhealthy: z.unhealthy + 1 })
    }
  }
  return { pools, cluster: stats.cluster, ...(stats.zones !== undefined ? { zones } : {}) }
}

export const isUnhealthy = (config: ControllerConfig, node: NodeView): boolean =>
  matchesAnyPolicy(config, node)

/** Kubernetes int-or-percent scaling with round-up, as PDB maxUnavailable. */
export const allowedUnhealthy = (percent: number, size: number): number => Math.ceil((percent * size) / 100)

export interface BreakerVerdict {
  readonly scope: string
  readonly size: number
  readonly unhealthy: number
  readonly allowed: number
  readonly percent: number
  readonly open: boolean
}

/** A scope's counts; `claims` (a Karpenter NodePool's NodeClaims, registered or not) sizes it as Karpenter does. */
export const scopeCount = (stats: PoolStats, pool: string | undefined, claims?: number): ScopeCount => {
  const count =
    pool === undefined
      ? stats.cluster
      : (stats.pools.get(pool) ?? { size: 0, unhealthy: 0, repairing: 0, failed: 0 })
  return claims === undefined ? count : { ...count, size: Math.max(count.size, claims) }
}

export const breakerVerdict = (
  config: ControllerConfig,
  stats: PoolStats,
  pool: string | undefined,
  claims?: number
): BreakerVerdict => {
  const scope = pool ?? CLUSTER_SCOPE
  const count = scopeCount(stats, pool, claims)
  const percent =
    (pool !== undefined ? config.pools[pool]?.maxUnhealthyPercent : undefined) ?? config.maxUnhealthyPercent
  const allowed = allowedUnhealthy(percent, count.size)
  return {
    scope,
    size: count.size,
    unhealthy: count.unhealthy,
    allowed,
    percent,
    open: count.unhealthy > allowed
  }
}
