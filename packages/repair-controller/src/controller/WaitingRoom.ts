/**
 * The due repairs waiting for a slot of their pool's in-flight budget (decide/order.ts orders them): a node joins
 * when its decision is Queued and leaves with any other decision (started, healthy, held, gone...). An entry not
 * renewed within `staleMs` (a node no reconcile has looked at since) no longer counts, so a node lost from view
 * never holds the pool's queue.
 */
import type { Waiting } from "../decide/order.ts"

export interface WaitingRoom {
  readonly put: (scope: string, w: Waiting, now: number) => void
  readonly remove: (node: string) => void
  readonly of: (scope: string, now: number) => ReadonlyArray<Waiting>
}

export const makeWaitingRoom = (staleMs: number): WaitingRoom => {
  const byScope = new Map<string, Map<string, { readonly w: Waiting; readonly at: number }>>()
  const scopeOf = new Map<string, string>()
  const remove = (node: string) => {
    const scope = scopeOf.get(node)
    if (scope === undefined) return
    scopeOf.delete(node)
    const m = byScope.get(scope)
    m?.delete(node)
    if (m?.size === 0) byScope.delete(scope)
  }
  return {
    put: (scope, w, now) => {
      if (scopeOf.get(w.node) !== scope) remove(w.node)
      scopeOf.set(w.node, scope)
      const m = byScope.get(scope) ?? new Map()
      m.set(w.node, { w, at: now })
      byScope.set(scope, m)
    },
    remove,
    of: (scope, now) =>
      [...(byScope.get(scope)?.values() ?? [])].filter((e) => now - e.at <= staleMs).map((e) => e.w)
  }
}
