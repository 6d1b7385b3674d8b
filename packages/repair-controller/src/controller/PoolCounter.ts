/**
 * Live per-pool node and unhealthy counts, updated in O(1) per informer event, so the breaker costs nothing
 * per decision even at thousands of nodes.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { isUnhealthy, type PoolStats, poolOf } from "../decide/breaker.ts"
import type { NodeView } from "../decide/NodeView.ts"

interface Entry {
  readonly pool: string | undefined
  readonly unhealthy: boolean
}

export interface PoolCounter {
  readonly upsert: (node: NodeView) => void
  readonly remove: (name: string) => void
  readonly stats: () => PoolStats
  readonly unhealthyNames: () => ReadonlyArray<string>
}

export const makePoolCounter = (config: ControllerConfig): PoolCounter => {
  const entries = new Map<string, Entry>()
  const pools = new Map<string, { size: number; unhealthy: number }>()
  const cluster = { size: 0, unhealthy: 0 }
  const apply = (e: Entry, sign: 1 | -1) => {
    cluster.size += sign
    if (e.unhealthy) cluster.unhealthy += sign
    if (e.pool === undefined) return
    const p = pools.get(e.pool) ?? { size: 0, unhealthy: 0 }
    p.size += sign
    if (e.unhealthy) p.unhealthy += sign
    if (p.size === 0) pools.delete(e.pool)
    else pools.set(e.pool, p)
  }
  const remove = (name: string) => {
    const old = entries.get(name)
    if (old === undefined) return
    apply(old, -1)
    entries.delete(name)
  }
  return {
    upsert: (node) => {
      remove(node.name)
      const e = { pool: poolOf(config, node), unhealthy: isUnhealthy(config, node) }
      entries.set(node.name, e)
      apply(e, 1)
    },
    remove,
    stats: () => ({ pools, cluster: { ...cluster } }),
    unhealthyNames: () => [...entries].filter(([, e]) => e.unhealthy).map(([n]) => n)
  }
}
