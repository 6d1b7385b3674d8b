/**
 * Live per-pool node and unhealthy counts, updated in O(1) per informer event, so the breaker costs nothing
 * per decision even at thousands of nodes. Unhealthy = a policy matches, or the journal holds a repair for it.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { isUnhealthy, type PoolStats, poolOf } from "../decide/breaker.ts"
import type { NodeView } from "../decide/NodeView.ts"

interface Entry {
  readonly pool: string | undefined
  readonly matching: boolean
  readonly unhealthy: boolean
}

export interface PoolCounter {
  readonly upsert: (node: NodeView) => void
  readonly remove: (name: string) => void
  /** The journal holds (or no longer holds) a repair of `name`. */
  readonly setRepairing: (name: string, repairing: boolean) => void
  readonly stats: () => PoolStats
  readonly unhealthyNames: () => ReadonlyArray<string>
}

export const makePoolCounter = (config: ControllerConfig): PoolCounter => {
  const entries = new Map<string, Entry>()
  const pools = new Map<string, { size: number; unhealthy: number }>()
  const cluster = { size: 0, unhealthy: 0 }
  const repairing = new Set<string>()
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
  const put = (name: string, pool: string | undefined, matching: boolean) => {
    remove(name)
    const e = { pool, matching, unhealthy: matching || repairing.has(name) }
    entries.set(name, e)
    apply(e, 1)
  }
  return {
    upsert: (node) => put(node.name, poolOf(config, node), isUnhealthy(config, node)),
    remove,
    setRepairing: (name, on) => {
      if (on === repairing.has(name)) return
      if (on) repairing.add(name)
      else repairing.delete(name)
      const e = entries.get(name)
      if (e !== undefined) put(name, e.pool, e.matching)
    },
    stats: () => ({ pools, cluster: { ...cluster } }),
    unhealthyNames: () => [...entries].filter(([, e]) => e.unhealthy).map(([n]) => n)
  }
}
