/**
 * Live per-pool node and unhealthy counts, updated in O(1) per informer event, so the breaker costs nothing
 * per decision even at thousands of nodes. Unhealthy = a policy matches, or the journal holds a repair for it.
 * A node under repair keeps counting (in its pool, as unhealthy) after its Node object is deleted, until its
 * repair ends: the capacity is not back before the replacement is Ready, so the breaker must not free its slot.
 *
 * Where a node counts is proven, never read (a node writes its own labels): a node under repair counts in the pool
 * and zone its record fixed; an unhealthy node in the pool and zone its owner proved (`placementOf`,
 * owner/Placements.ts); an unhealthy node not proven yet in the cluster only, listed in `unproven` with the pool
 * and zone its labels claim (decide.ts waits for its proof where that claim could change a decision); one whose
 * machine the cloud does not vouch for in the cluster only. A healthy node counts in the pool and zone the fleet
 * inventory (`locatedOf`, owner/Inventory.ts: the cloud's placement of the machine its name is bound to) gives,
 * and in the cluster only until then or when the cloud knows no machine by its name: a pool's or zone's size is
 * never read from a label, and a zone or pool nothing proved does not exist here (ADR 0017). A failed repair keeps
 * its slot (and is counted as failed) until an operator retries or abandons it.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE, isUnhealthy, labelPlacement, type PoolStats, poolOf } from "../decide/breaker.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import { ZONE_LABEL } from "@nodemend/reason-codes"

interface Entry {
  readonly node: NodeView
  /** Where it counts: its repair's pool and zone while it has one, else its proven (or, healthy, labelled) ones. */
  readonly pool: string | undefined
  readonly zone: string | undefined
  readonly matching: boolean
  readonly unhealthy: boolean
  readonly repairing: boolean
  readonly failed: boolean
  /** Unhealthy and not proven yet: the pool and zone its labels claim (counted in the cluster only). */
  readonly claims?: { readonly pool: string | undefined; readonly zone: string | undefined }
}

/**
 * A repair as the counter sees it: the pool and zone it counts against (fixed when it was decided; `byLabel` when
 * unknown, as for an unreadable journal entry) and whether it has failed.
 */
export type RepairSlot =
  | { readonly pool: string | undefined; readonly zone?: string | undefined; readonly failed: boolean }
  | { readonly byLabel: true; readonly failed: boolean }

export interface PoolCounter {
  readonly upsert: (node: NodeView) => void
  readonly remove: (name: string) => void
  /** The journal holds a repair of `name` (or a decision just took its slot); undefined: no longer. */
  readonly setRepair: (name: string, repair: RepairSlot | undefined) => void
  /** Counts `name` again (its placement was proven). */
  readonly recount: (name: string) => void
  readonly stats: () => PoolStats
  readonly unhealthyNames: () => ReadonlyArray<string>
  /**
   * Called after every change of a scope's counts (a pool, or `CLUSTER_SCOPE`): `eased` when it may admit more
   * repairs now (fewer unhealthy or more nodes).
   */
  readonly onChange: (listener: (scope: string, eased: boolean) => void) => void
}

const labelZone = (node: NodeView) => {
  const z = node.labels[ZONE_LABEL]
  return z === "" ? undefined : z
}

/**
 * `placementOf`: an unhealthy node's proven placement (its owner proof); `locatedOf`: any node's placement in the
 * fleet inventory. Both by default its labels' claim (what-if replays, tests).
 */
export const makePoolCounter = (
  config: ControllerConfig,
  placementOf: (node: NodeView) => Placement = (node) => labelPlacement(config, node),
  locatedOf: (node: NodeView) => Placement = (node) => labelPlacement(config, node)
): PoolCounter => {
  const entries = new Map<string, Entry>()
  const pools = new Map<string, { size: number; unhealthy: number; repairing: number; failed: number }>()
  const cluster = { size: 0, unhealthy: 0, repairing: 0, failed: 0 }
  const zones = new Map<string, { size: number; unhealthy: number }>()
  const repairing = new Map<string, RepairSlot>()
  /** Unhealthy nodes not proven yet, by name: their claimed pool and zone. */
  const unproven = new Map<string, { pool: string | undefined; zone: string | undefined }>()
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
    // A claim may hold a decision in its pool back (decide.ts): its end eases that pool.
    if (e.claims?.pool !== undefined) track(e.claims.pool, 0, sign)
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
    unproven.delete(name)
  }
  /** Where a node not under repair counts (see the header). */
  const placeOf = (node: NodeView, matching: boolean): Pick<Entry, "pool" | "zone" | "claims"> => {
    const p = placementOf(node)
    if (p._tag === "Proven") return { pool: p.pool, zone: p.zone }
    if (p._tag === "Unprovable") return { pool: undefined, zone: undefined }
    if (matching)
      return {
        pool: undefined,
        zone: undefined,
        claims: { pool: poolOf(config, node), zone: labelZone(node) }
      }
    const l = locatedOf(node)
    return l._tag === "Proven" ? { pool: l.pool, zone: l.zone } : { pool: undefined, zone: undefined }
  }
  const put = (node: NodeView, matching: boolean) => {
    remove(node.name)
    const r = repairing.get(node.name)
    const where =
      r !== undefined && !("byLabel" in r)
        ? { pool: r.pool, zone: r.zone }
        : r !== undefined
          ? { pool: poolOf(config, node), zone: labelZone(node) }
          : placeOf(node, matching)
    const e: Entry = {
      node,
      ...where,
      matching,
      unhealthy: matching || r !== undefined,
      repairing: r !== undefined,
      failed: r?.failed === true
    }
    entries.set(node.name, e)
    if (e.claims !== undefined) unproven.set(node.name, e.claims)
    apply(e, 1)
  }
  return {
    upsert: (node) =>
      settle(() => {
        departed.delete(node.name)
        put(node, isUnhealthy(config, node))
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
        // record's, which is the same): nothing later moves it. The record names the zone too.
        else if (was !== undefined && !("byLabel" in was))
          repairing.set(name, {
            pool: was.pool,
            zone: was.zone ?? ("byLabel" in slot ? undefined : slot.zone),
            failed: slot.failed
          })
        else repairing.set(name, slot)
        if (slot === undefined && departed.delete(name)) return remove(name)
        const e = entries.get(name)
        if (e !== undefined) put(e.node, e.matching)
      }),
    recount: (name) =>
      settle(() => {
        const e = entries.get(name)
        if (e !== undefined && !departed.has(name)) put(e.node, e.matching)
      }),
    stats: () => ({ pools, cluster: { ...cluster }, zones, unproven: [...unproven.values()] }),
    unhealthyNames: () => [...entries].filter(([, e]) => e.unhealthy).map(([n]) => n),
    onChange: (l) => {
      listener = l
    }
  }
}
