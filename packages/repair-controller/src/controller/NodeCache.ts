/**
 * The Node informer: list+watch with relist on 410 (client-node does that), a restart after any other error
 * (client-node stops for good), a periodic resync, and change filtering: a node is enqueued only when its
 * condition statuses / lastTransitionTimes, repair or veto annotations, pool label or deletion change, never
 * for heartbeats.
 */
import { type CoreV1Api, makeInformer, type V1Node } from "@kubernetes/client-node"
import type { KubeConfig } from "@kubernetes/client-node"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../decide/NodeView.ts"
import { nodeSignature, nodeView } from "../kube/views.ts"
import { makePoolCounter, type PoolCounter } from "./PoolCounter.ts"

/**
 * Drops what the controller never reads from a cached Node (managed fields, images, addresses, node info,
 * capacity...), in place: the informer's cache holds the same object. Roughly 2/3 of a Node's memory.
 */
export const slim = (n: V1Node): void => {
  const m = n.metadata
  if (m !== undefined) {
    delete m.managedFields
    delete m.ownerReferences
    delete m.finalizers
  }
  const st = n.status
  if (st === undefined) return
  n.status = { ...(st.conditions !== undefined ? { conditions: st.conditions } : {}) }
}

export interface NodeCache {
  readonly get: (name: string) => V1Node | undefined
  readonly view: (name: string) => NodeView | undefined
  readonly names: () => ReadonlyArray<string>
  readonly counter: PoolCounter
  readonly synced: () => boolean
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

export const makeNodeCache = (
  kc: KubeConfig,
  core: CoreV1Api,
  config: ControllerConfig,
  onChange: (name: string) => void,
  log: (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) => void
): NodeCache => {
  const selector = config.nodeSelector === "" ? undefined : config.nodeSelector
  // Paged list: at thousands of Nodes one response would be tens of MB of JSON held at once.
  const listAll = async () => {
    const items: V1Node[] = []
    let _continue: string | undefined
    let resourceVersion: string | undefined
    do {
      const page = await core.listNode({
        limit: 500,
        ...(selector !== undefined ? { labelSelector: selector } : {}),
        _continue
      })
      for (const n of page.items) {
        slim(n)
        items.push(n)
      }
      resourceVersion ??= page.metadata?.resourceVersion
      _continue = page.metadata?._continue
    } while (_continue)
    return { apiVersion: "v1", kind: "NodeList", metadata: { resourceVersion }, items }
  }
  const informer = makeInformer<V1Node>(kc, "/api/v1/nodes", listAll, selector)
  const signatures = new Map<string, string>()
  const views = new Map<string, NodeView>()
  const counter = makePoolCounter(config)
  let stopping = false
  let synced = false
  let resync: NodeJS.Timeout | undefined

  const seen = (n: V1Node) => {
    const name = n.metadata?.name
    if (name === undefined) return
    slim(n)
    // Heartbeats change nothing in the signature: no view rebuilt, nothing enqueued.
    const sig = nodeSignature(n, config.poolLabel)
    if (signatures.get(name) === sig) return
    const view = nodeView(n)
    views.set(name, view)
    signatures.set(name, sig)
    counter.upsert(view)
    onChange(name)
  }
  informer.on("add", seen)
  informer.on("update", seen)
  informer.on("delete", (n) => {
    const name = n.metadata?.name
    if (name === undefined) return
    signatures.delete(name)
    views.delete(name)
    counter.remove(name)
    onChange(name)
  })
  informer.on("error", (err: unknown) => {
    if (stopping) return
    log("warn", "node informer stopped; restarting in 2s", { error: String((err as Error)?.message ?? err) })
    setTimeout(() => {
      if (!stopping) void informer.start().catch(() => undefined)
    }, 2000).unref()
  })

  return {
    get: (name) => informer.get(name),
    view: (name) => views.get(name),
    names: () => [...views.keys()],
    counter,
    synced: () => synced,
    start: async () => {
      await informer.start()
      synced = true
      resync = setInterval(() => {
        for (const name of views.keys()) onChange(name)
      }, config.resyncSeconds * 1000)
      resync.unref()
    },
    stop: async () => {
      stopping = true
      if (resync !== undefined) clearInterval(resync)
      await informer.stop()
    }
  }
}
