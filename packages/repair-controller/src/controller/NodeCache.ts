/**
 * The Node informer: paged list, then watch from its resourceVersion with bookmarks; a 410 (expired
 * resourceVersion) relists, any other failure re-watches after a backoff, a watch the server ends (its
 * timeoutSeconds) re-watches at once. A periodic resync, and change filtering: a node is enqueued only when its
 * condition statuses / lastTransitionTimes, repair or veto annotations, pool label or deletion change, never
 * for heartbeats.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../decide/NodeView.ts"
import { HttpStatusError, type KubeHttp, type WatchEvent } from "../kube/KubeHttp.ts"
import type { List, Node } from "../kube/types.ts"
import { nodeSignature, nodeView } from "../kube/views.ts"
import { makePoolCounter, type PoolCounter } from "./PoolCounter.ts"

/**
 * Drops what the controller never reads from a cached Node (managed fields, images, addresses, node info,
 * capacity...), in place: the informer's cache holds the same object. Roughly 2/3 of a Node's memory.
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
  n.status = { ...(st.conditions !== undefined ? { conditions: st.conditions } : {}) }
}

export interface NodeCache {
  readonly get: (name: string) => Node | undefined
  readonly view: (name: string) => NodeView | undefined
  readonly names: () => ReadonlyArray<string>
  readonly counter: PoolCounter
  readonly synced: () => boolean
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

const WATCH_SECONDS = 300
const RETRY_MS = 2000

export const makeNodeCache = (
  http: KubeHttp,
  config: ControllerConfig,
  onChange: (name: string) => void,
  log: (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) => void
): NodeCache => {
  const selector =
    config.nodeSelector === "" ? "" : `&labelSelector=${encodeURIComponent(config.nodeSelector)}`
  const nodes = new Map<string, Node>()
  const signatures = new Map<string, string>()
  const views = new Map<string, NodeView>()
  const counter = makePoolCounter(config)
  const abort = new AbortController()
  let resourceVersion: string | undefined
  let synced = false
  let resync: NodeJS.Timeout | undefined
  let loop: Promise<void> | undefined
  /** The server ended the last watch with a non-410 ERROR event: re-watching at once would loop hot. */
  let watchErrored = false

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

  const get = async <A>(path: string): Promise<A> => {
    const a = await http.request("GET", path)
    if (a.status !== 200) throw new HttpStatusError(a.status, a.text)
    return JSON.parse(a.text) as A
  }

  /** Paged: at thousands of Nodes one response would be tens of MB of JSON held at once. */
  const relist = async () => {
    const present = new Set<string>()
    let cont: string | undefined
    let rv: string | undefined
    do {
      const page = await get<List<Node>>(
        `/api/v1/nodes?limit=500${selector}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`
      )
      for (const n of page.items) {
        const name = n.metadata?.name
        if (name === undefined) continue
        present.add(name)
        seen(n)
      }
      rv ??= page.metadata?.resourceVersion
      cont = page.metadata?.continue || undefined
    } while (cont !== undefined)
    for (const name of [...nodes.keys()]) if (!present.has(name)) gone(name)
    resourceVersion = rv
  }

  const onEvent = (e: WatchEvent) => {
    const obj = e.object as Node & { code?: number }
    if (e.type === "ERROR") {
      // 410 Gone: our resourceVersion is older than the watch cache keeps; start over with a list.
      if (obj.code === 410) resourceVersion = undefined
      else {
        // e.g. 504 "Too large resource version" (after an etcd restore): the same watch fails the same way.
        watchErrored = true
        log("warn", "node watch error event", { status: JSON.stringify(e.object).slice(0, 300) })
      }
      return
    }
    const rv = obj.metadata?.resourceVersion
    if (rv !== undefined) resourceVersion = rv
    if (e.type === "BOOKMARK") return
    if (e.type === "DELETED") {
      if (obj.metadata?.name !== undefined) gone(obj.metadata.name)
      return
    }
    seen(obj)
  }

  // The abort listener goes when the pause ends: one left per retry would pile up through an API outage.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t)
        resolve()
      }
      const t = setTimeout(() => {
        abort.signal.removeEventListener("abort", wake)
        resolve()
      }, ms)
      abort.signal.addEventListener("abort", wake, { once: true })
    })

  const watchLoop = async () => {
    while (!abort.signal.aborted) {
      try {
        if (resourceVersion === undefined) await relist()
        await http.watch(
          `/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion ?? "")}&timeoutSeconds=${WATCH_SECONDS + Math.floor(Math.random() * 60)}${selector}`,
          onEvent,
          abort.signal
        )
        if (watchErrored) {
          watchErrored = false
          await sleep(RETRY_MS)
        }
      } catch (e) {
        if (abort.signal.aborted) return
        if (e instanceof HttpStatusError && e.statusCode === 410) {
          resourceVersion = undefined
          continue
        }
        log("warn", `node watch failed; again in ${RETRY_MS / 1000}s`, {
          error: String((e as Error)?.message ?? e)
        })
        await sleep(RETRY_MS)
      }
    }
  }

  return {
    get: (name) => nodes.get(name),
    view: (name) => views.get(name),
    names: () => [...views.keys()],
    counter,
    synced: () => synced,
    start: async () => {
      await relist()
      synced = true
      loop = watchLoop()
      resync = setInterval(() => {
        for (const name of views.keys()) onChange(name)
      }, config.resyncSeconds * 1000)
      resync.unref()
    },
    stop: async () => {
      abort.abort()
      if (resync !== undefined) clearInterval(resync)
      await loop
    }
  }
}
