/**
 * Nodes the breaker holds back, by scope (pool, or the cluster). When a scope's unhealthy count drops (a node
 * recovered, a repair finished) or its size grows, its held nodes are decided again at once instead of at their
 * next requeue (minutes): a breaker that closes is noticed in the time of one informer event.
 */
import { CLUSTER_SCOPE } from "../decide/breaker.ts"

export interface BlockedNodes {
  readonly block: (name: string, scope: string) => void
  readonly unblock: (name: string) => void
  /** A scope may admit more repairs now: wakes its held nodes (and, for any pool, the cluster's). */
  readonly eased: (scope: string) => void
}

export const makeBlockedNodes = (wake: (name: string) => void): BlockedNodes => {
  const byScope = new Map<string, Set<string>>()
  const scopeOf = new Map<string, string>()
  const unblock = (name: string) => {
    const scope = scopeOf.get(name)
    if (scope === undefined) return
    scopeOf.delete(name)
    const set = byScope.get(scope)
    set?.delete(name)
    if (set?.size === 0) byScope.delete(scope)
  }
  const wakeScope = (scope: string) => {
    // A copy: a woken node may be blocked again (re-added to this set) before the loop ends.
    for (const name of [...(byScope.get(scope) ?? [])]) wake(name)
  }
  return {
    block: (name, scope) => {
      unblock(name)
      scopeOf.set(name, scope)
      const set = byScope.get(scope) ?? new Set<string>()
      set.add(name)
      byScope.set(scope, set)
    },
    unblock,
    eased: (scope) => {
      wakeScope(scope)
      // Every node counts in the cluster scope too.
      if (scope !== CLUSTER_SCOPE) wakeScope(CLUSTER_SCOPE)
    }
  }
}
