/**
 * The Node informer on the shared list+watch loop (`@nodemend/kube-access`, ADR 0011): paged list, then watch
 * from its resourceVersion with bookmarks; a 410 (expired resourceVersion) relists, any other failure re-watches
 * after 2 s, a watch the server ends (its timeoutSeconds, jittered) re-watches at once. Change filtering: a node
 * is enqueued only when its condition statuses / lastTransitionTimes, repair or veto annotations, pool label or
 * deletion change, never for heartbeats. The periodic resync of every cached node is the controller's
 * (Controller.ts, on Effect's Clock).
 */
import { Duration, Effect, Fiber } from "effect"
import {
  type KubeHttp,
  type ListWatchOptions,
  listOnce,
  listWatch,
  NODES_PATH,
  type Node
} from "@nodemend/kube-access"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import { startError } from "../kube/KubeHttp.ts"
import { nodeSignature, nodeView } from "../kube/views.ts"
import { GPU_RESOURCE } from "../decide/replacementHealth.ts"
import { makePoolCounter, type PoolCounter } from "./PoolCounter.ts"

/** The one resource of capacity and allocatable the controller reads: the replacement health gate's GPUs. */
const gpusOf = (resources: unknown): Record<string, string> | undefined => {
  const v =
    typeof resources === "object" && resources !== null
      ? (resources as Record<string, unknown>)[GPU_RESOURCE]
      : undefined
  return v === undefined ? undefined : { [GPU_RESOURCE]: String(v) }
}

/**
 * Drops what the controller never reads from a cached Node (managed fields, images, addresses, node info,
 * capacity but its GPUs...), in place: the informer's cache holds the same object. Roughly 2/3 of a Node's memory.
 */
export const slim = (n: Node): void => {
  const m = n.metadata
  if (m !== undefined) {
    delete m.managedFields
    delete m.ownerReferences
    delete m.finalizers
  }
  const st = n.status
  if (st === undefined) return
  const capacity = gpusOf(st.capacity)
  const allocatable = gpusOf(st.allocatable)
  n.status = {
    ...(st.conditions !== undefined ? { conditions: st.conditions } : {}),
    ...(capacity !== undefined ? { capacity } : {}),
    ...(allocatable !== undefined ? { allocatable } : {})
  }
}

export interface NodeCache {
  readonly get: (name: string) => Node | undefined
  readonly view: (name: string) => NodeView | undefined
  readonly names: () => ReadonlyArray<string>
  /** Every cached Node's view, without a copy: read it before the cache changes. */
  readonly views: () => Iterable<NodeView>
  readonly counter: PoolCounter
  readonly synced: () => boolean
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

const WATCH_SECONDS = 300
const RETRY = Duration.seconds(2)

export const makeNodeCache = (
  http: KubeHttp,
  config: ControllerConfig,
  onChange: (name: string) => void,
  log: (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) => void,
  /** Where an unhealthy node counts (owner/Placements.ts); by its labels when absent (tests). */
  placementOf?: (node: NodeView) => Placement,
  /** Where any node counts by the fleet inventory (owner/Inventory.ts); by its labels when absent (tests). */
  locatedOf?: (node: NodeView) => Placement
): NodeCache => {
  const nodes = new Map<string, Node>()
  const signatures = new Map<string, string>()
  const views = new Map<string, NodeView>()
  const counter = makePoolCounter(config, placementOf, locatedOf)
  let synced = false
  let loop: Fiber.Fiber<never> | undefined
  /** Names listed since the current (re)list began; a cached Node not among them when it ends is gone. */
  let listed = new Set<string>()

  const seen = (n: Node) => {
    const name = n.metadata?.name
    if (name === undefined) return
    slim(n)
    nodes.set(name, n)
    // Heartbeats change nothing in the signature: no view rebuilt, nothing enqueued.
    const sig = nodeSignature(n, config.poolLabel)
    if (signatures.get(name) === sig) return
    const view = nodeView(n)
    views.set(name, view)
    signatures.set(name, sig)
    counter.upsert(view)
    onChange(name)
  }
  const gone = (name: string) => {
    nodes.delete(name)
    signatures.delete(name)
    views.delete(name)
    counter.remove(name)
    onChange(name)
  }

  const informer: ListWatchOptions = {
    http,
    path: NODES_PATH,
    query: config.nodeSelector === "" ? {} : { labelSelector: config.nodeSelector },
    // Paged: at thousands of Nodes one response would be tens of MB of JSON held at once.
    pageSize: 500,
    onListStart: () => {
      listed = new Set()
    },
    onObject: (type, object) => {
      const n = object as Node
      const name = n.metadata?.name
      if (name === undefined) return
      if (type === "DELETED") return gone(name)
      if (type === "LISTED") listed.add(name)
      seen(n)
    },
    onSynced: () => {
      for (const name of [...nodes.keys()]) if (!listed.has(name)) gone(name)
    },
    timeoutSeconds: () => WATCH_SECONDS + Math.floor(Math.random() * 60),
    // e.g. 504 "Too large resource version" (after an etcd restore): the same watch fails the same way.
    backoff: (end) => (end._tag === "Ended" || end._tag === "Expired" ? Duration.zero : RETRY),
    onFailure: (_end, pause, detail) =>
      Effect.sync(() =>
        log("warn", `node watch failed; again in ${Duration.toSeconds(pause)}s`, { error: detail })
      )
  }

  return {
    get: (name) => nodes.get(name),
    view: (name) => views.get(name),
    names: () => [...views.keys()],
    views: () => views.values(),
    counter,
    synced: () => synced,
    start: async () => {
      const resourceVersion = await Effect.runPromise(listOnce(informer).pipe(Effect.mapError(startError)))
      synced = true
      loop = Effect.runFork(listWatch({ ...informer, resourceVersion }))
    },
    stop: async () => {
      if (loop !== undefined) await Effect.runPromise(Fiber.interrupt(loop))
    }
  }
}
