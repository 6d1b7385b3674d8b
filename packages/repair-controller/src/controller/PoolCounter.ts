/**
 * Live per-pool node and unhealthy counts, updated in O(1) per informer event, so the breaker costs nothing
 * per decision even at thousands of nodes. Unhealthy = a policy matches, or the journal holds a repair for it.
 * A node under repair keeps counting (in its pool, as unhealthy) after its Node object is deleted, until its
 * repair ends: the capacity is not back before the replacement is Ready, so the breaker must not free its slot.
 * A node under repair counts in the pool its repair was decided (and its record written) for, never under the pool
 * label it carries now: a node can relabel itself, and must not carry its in-flight slot into another pool's budget.
 * A failed repair keeps its slot (and is counted as failed) until an operator retries or abandons it.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE, isUnhealthy, type PoolStats, poolOf } from "../decide/breaker.ts"
import type { NodeView } from "../domain/NodeView.ts"
import { ZONE_LABEL } from "@nodemend/reason-codes"

interface Entry {
  /** The pool label the node carries now. */
  readonly labelPool: string | undefined
  /** Its zone label (the failure-domain breaker's count). */
  readonly zone: string | undefined
  /** Where it counts: its repair's pool while it has one, else its label. */
  readonly pool: string | undefined
  readonly matching: boolean
  readonly unhealthy: boolean
  readonly repairing: boolean
  readonly failed: boolean
}

/**
 * A repair as the counter sees it: the pool it counts against (fixed when it was decided; `byLabel` when unknown,
 * as for an unreadable journal entry) and whether it has failed.
 */
export type RepairSlot =
  | { readonly pool: string | undefined; readonly failed: boolean }
  | { readonly byLabel: true; readonly failed: boolean }

export interface PoolCounter {
  readonly upsert: (node: NodeView) => void
  readonly remove: (name: string) => void
  /** The journal holds a repair of `name` (or a decision just took its slot); undefined: no longer. */
  readonly setRepair: (name: string, repair: RepairSlot | undefined) => void
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
  const pools = new Map<string, { size: number; unhealthy: number; repairing: number; failed: number }>()
  const cluster = { size: 0, unhealthy: 0, repairing: 0, failed: 0 }
  const zones = new Map<string, { size: number; unhealthy: number }>()
  const repairing = new Map<string, RepairSlot>()
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
    if (e.failed) cluster.failed += sign
    track(CLUSTER_SCOPE, sign, e.unhealthy ? sign : 0)
    if (e.zone !== undefined) {
      const z = zones.get(e.zone) ?? { size: 0, unhealthy: 0 }
      z.size += sign
      if (e.unhealthy) z.unhealthy += sign
      if (z.size === 0) zones.delete(e.zone)
      else zones.set(e.zone, z)
    }
    if (e.pool === undefined) return
    track(e.pool, sign, e.unhealthy ? sign : 0)
    const p = pools.get(e.pool) ?? { size: 0, unhealthy: 0, repairing: 0, failed: 0 }
    p.size += sign
    if (e.unhealthy) p.unhealthy += sign
    if (e.repairing) p.repairing += sign
    if (e.failed) p.failed += sign
    if (p.size === 0) pools.delete(e.pool)
    else pools.set(e.pool, p)
  }
  const remove = (name: string) => {
    const old = entries.get(name)
    if (old === undefined) return
    apply(old, -1)
    entries.delete(name)
  }
  const put = (name: string, labelPool: string | undefined, zone: string | undefined, matching: boolean) => {
    remove(name)
    const r = repairing.get(name)
    const pool = r === undefined || "byLabel" in r ? labelPool : r.pool
    const e = {
      labelPool,
      zone,
      pool,
      matching,
      unhealthy: matching || r !== undefined,
      repairing: r !== undefined,
      failed: r?.failed === true
    }
    entries.set(name, e)
    apply(e, 1)
  }
  return {
    upsert: (node) =>
      settle(() => {
        departed.delete(node.name)
        const zone = node.labels[ZONE_LABEL]
        put(node.name, poolOf(config, node), zone === "" ? undefined : zone, isUnhealthy(config, node))
      }),
    remove: (name) =>
      settle(() => {
        if (repairing.has(name) && entries.has(name)) departed.add(name)
        else remove(name)
      }),
    setRepair: (name, slot) =>
      settle(() => {
        const was = repairing.get(name)
        if (slot === undefined && was === undefined) return
        if (slot === undefined) repairing.delete(name)
        // The pool a repair counts against is fixed by the first slot that names one (the decision's, then the
        // record's, which is the same): nothing later moves it.
        else if (was !== undefined && !("byLabel" in was))
          repairing.set(name, { pool: was.pool, failed: slot.failed })
        else repairing.set(name, slot)
        if (slot === undefined && departed.delete(name)) return remove(name)
        const e = entries.get(name)
        if (e !== undefined) put(name, e.labelPool, e.zone, e.matching)
      }),
    stats: () => ({ pools, cluster: { ...cluster }, zones }),
    unhealthyNames: () => [...entries].filter(([, e]) => e.unhealthy).map(([n]) => n),
    onChange: (l) => {
      listener = l
    }
  }
}
