/**
 * The fleet inventory (ADR 0017): where the cloud places every Node's machine, healthy ones included, so that a
 * pool's and a zone's size are counted from the cloud's facts (`CloudProvider.locate`), never from the labels a
 * node writes on itself. A Node is queued when seen and asked in the next batch (`flush`, every
 * `INVENTORY_BATCH_MS`, `batchSize` names a call); its answer is fixed for that very Node (uid and providerID) and
 * asked again only by the periodic `refresh` (a pool tag the cloud changed, an instance gone). A name the cloud does
 * not bind to a live machine is `Unprovable`: it counts in no pool and no zone. A failed call leaves its nodes
 * queued for the next batch. Pure state plus two effects; the controller drives them (Controller.ts).
 */
import { Effect, Latch } from "effect"
import type { CloudError, Location } from "../cloud/CloudProvider.ts"
import type { NodeRef, NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"

/** How often queued Nodes are asked: a new Node counts in its pool within about this. */
export const INVENTORY_BATCH_MS = 1_000
/** How often every located Node is asked again. */
export const INVENTORY_REFRESH_MS = 300_000

export interface Inventory {
  /** The placement the cloud gave this very Node; `Pending` until asked and answered. */
  readonly of: (node: NodeView) => Placement
  /** Queues `node` for the next batch unless it is located (or queued) for this very Node. */
  readonly ensure: (node: NodeView) => void
  readonly forget: (name: string) => void
  /** Asks the cloud about every queued Node, in batches; `settled` is called for each answer that changed. */
  readonly flush: Effect.Effect<void, CloudError>
  /** Queues every located Node again (the next `flush` asks). */
  readonly refresh: () => void
  /** Waits until a Node is queued: the batches run only while there is something to ask (no idle wake-ups). */
  readonly whenQueued: Effect.Effect<void>
  readonly size: () => number
  /** Nodes asked about and not answered yet (a failed call keeps them so). */
  readonly pending: () => number
}

export interface InventoryPorts {
  readonly locate: (nodes: ReadonlyArray<NodeRef>) => Effect.Effect<ReadonlyMap<string, Location>, CloudError>
  /** A Node's placement was answered (or changed): count it again. */
  readonly settled: (name: string) => void
  readonly batchSize: number
}

interface Entry {
  readonly node: NodeView
  readonly placement: Placement
}

const sameNode = (a: NodeView, b: NodeView) =>
  a.uid === b.uid && (a.providerID ?? "") === (b.providerID ?? "")

const refOf = (n: NodeView): NodeRef => ({
  name: n.name,
  providerID: n.providerID ?? "",
  labels: n.labels,
  annotations: n.annotations
})

const samePlacement = (a: Placement, b: Placement) =>
  a._tag === b._tag &&
  (a._tag !== "Proven" || (b._tag === "Proven" && a.pool === b.pool && a.zone === b.zone))

export const makeInventory = (ports: InventoryPorts): Inventory => {
  const entries = new Map<string, Entry>()
  /** Names to ask about in the next flush: kept apart so that a flush and a refresh cost the queued, not the fleet. */
  const queued = new Set<string>()
  /** Open while a Node may be queued; closed by a flush that finds none. */
  const queuedLatch = Latch.makeUnsafe(false)
  let unanswered = 0
  /** Every write of `entries` goes through here: it keeps the count of Pending entries. */
  const put = (name: string, e: Entry | undefined) => {
    if (entries.get(name)?.placement._tag === "Pending") unanswered--
    if (e === undefined) entries.delete(name)
    else {
      entries.set(name, e)
      if (e.placement._tag === "Pending") unanswered++
    }
  }
  const answer = (asked: ReadonlyArray<NodeView>, found: ReadonlyMap<string, Location>) => {
    for (const node of asked) {
      const e = entries.get(node.name)
      // Gone, or another Node under the name since it was asked: its own answer decides.
      if (e === undefined || !sameNode(e.node, node)) continue
      queued.delete(node.name)
      const l = found.get(node.name)
      const placement: Placement =
        l === undefined
          ? { _tag: "Unprovable", why: `the cloud knows no live machine named ${node.name}` }
          : { _tag: "Proven", pool: l.pool, zone: l.zone }
      if (samePlacement(e.placement, placement)) continue
      put(node.name, { node: e.node, placement })
      ports.settled(node.name)
    }
  }
  const batch = (nodes: ReadonlyArray<NodeView>) =>
    ports.locate(nodes.map(refOf)).pipe(Effect.map((found) => answer(nodes, found)))
  return {
    of: (node) => {
      const e = entries.get(node.name)
      return e !== undefined && sameNode(e.node, node) ? e.placement : { _tag: "Pending" }
    },
    ensure: (node) => {
      if (node.uid === undefined) return
      const e = entries.get(node.name)
      if (e !== undefined && sameNode(e.node, node)) return
      put(node.name, { node, placement: { _tag: "Pending" } })
      queued.add(node.name)
      queuedLatch.openUnsafe()
    },
    forget: (name) => {
      put(name, undefined)
      queued.delete(name)
    },
    flush: Effect.suspend(() => {
      const nodes: NodeView[] = []
      for (const name of queued) {
        const e = entries.get(name)
        if (e !== undefined) nodes.push(e.node)
      }
      if (nodes.length === 0) queuedLatch.closeUnsafe()
      const batches: NodeView[][] = []
      for (let i = 0; i < nodes.length; i += ports.batchSize)
        batches.push(nodes.slice(i, i + ports.batchSize))
      return Effect.forEach(batches, batch, { discard: true })
    }),
    refresh: () => {
      for (const name of entries.keys()) queued.add(name)
      if (entries.size > 0) queuedLatch.openUnsafe()
    },
    whenQueued: queuedLatch.await,
    size: () => entries.size,
    pending: () => unanswered
  }
}
