/**
 * Live per-pool node and unhealthy counts, updated in O(1) per informer event, so the breaker costs nothing
 * per decision even at thousands of nodes. Unhealthy = a policy matches, or the journal holds a repair for it.
 * A node under repair keeps counting (in its pool, as unhealthy) after its Node object is deleted, until its
 * repair ends: the capacity is not back before the replacement is Ready, so the breaker must not free its slot.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE, isUnhealthy, type PoolStats, poolOf } from "../decide/breaker.ts"
import type { NodeView } from "../domain/NodeView.ts"

interface Entry {
  readonly pool: string | undefined
  readonly matching: boolean
  readonly unhealthy: boolean
  readonly repairing: boolean
}

export interface PoolCounter {
  readonly upsert: (node: NodeView) => void
  readonly remove: (name: string) => void
  /** The journal holds (or no longer holds) a repair of `name`. */
  readonly setRepairing: (name: string, repairing: boolean) => void
  readonly stats: () => PoolStats
  readonly unhealthyNames: () => ReadonlyArray<string>
  /**
   * Called after every change of a scope's counts (a pool, or `CLUSTER_SCOPE`): `eased` when it may admit more
   * repairs now (fewer unhealthy or more nodes).
   */
  readonly onChange: (listener: (scope: string, eased: boolean) => void) => void
}

export const makePoolCounter = (config: ControllerConfig): PoolCounter => {
  const entries = new Map<string, Entry>()
  const pools = new Map<string, { size: number; unhealthy: number; repairing: number }>()
  const cluster = { size: 0, unhealthy: 0, repairing: 0 }
  const repairing = new Set<string>()
  /** Nodes whose Node object is gone while their repair still runs: counted until the repair ends. */
  const departed = new Set<string>()
  let listener: (scope: string, eased: boolean) => void = () => {}
  /** Per scope, how size and unhealthy moved in the current operation. */
  const deltas = new Map<string, { size: number; unhealthy: number }>()
  const track = (scope: string, size: number, unhealthy: number) => {
    const d = deltas.get(scope) ?? { size: 0, unhealthy: 0 }
    d.size += size
    d.unhealthy += unhealthy
    deltas.set(scope, d)
  }
  const settle = <A>(op: () => A): A => {
    const out = op()
    const moved = [...deltas].filter(([, d]) => d.size !== 0 || d.unhealthy !== 0)
    deltas.clear()
    for (const [scope, d] of moved) listener(scope, d.unhealthy < 0 || (d.size > 0 && d.unhealthy === 0))
    return out
  }
  const apply = (e: Entry, sign: 1 | -1) => {
    cluster.size += sign
    if (e.unhealthy) cluster.unhealthy += sign
    if (e.repairing) cluster.repairing += sign
    track(CLUSTER_SCOPE, sign, e.unhealthy ? sign : 0)
    if (e.pool === undefined) return
    track(e.pool, sign, e.unhealthy ? sign : 0)
    const p = pools.get(e.pool) ?? { size: 0, unhealthy: 0, repairing: 0 }
    p.size += sign
    if (e.unhealthy) p.unhealthy += sign
    if (e.repairing) p.repairing += sign
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
    const e = { pool, matching, unhealthy: matching || repairing.has(name), repairing: repairing.has(name) }
    entries.set(name, e)
    apply(e, 1)
  }
  return {
    upsert: (node) =>
      settle(() => {
        departed.delete(node.name)
        put(node.name, poolOf(config, node), isUnhealthy(config, node))
      }),
    remove: (name) =>
      settle(() => {
        if (repairing.has(name) && entries.has(name)) departed.add(name)
        else remove(name)
      }),
    setRepairing: (name, on) =>
      settle(() => {
        if (on === repairing.has(name)) return
        if (on) repairing.add(name)
        else repairing.delete(name)
        if (!on && departed.delete(name)) return remove(name)
        const e = entries.get(name)
        if (e !== undefined) put(name, e.pool, e.matching)
      }),
    stats: () => ({ pools, cluster: { ...cluster } }),
    unhealthyNames: () => [...entries].filter(([, e]) => e.unhealthy).map(([n]) => n),
    onChange: (l) => {
      listener = l
    }
  }
}
