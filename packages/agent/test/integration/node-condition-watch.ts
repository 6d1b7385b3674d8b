/**
 * Watches one Node and records every change of one condition type with the local receive time, re-watching
 * from the last resourceVersion after the client's 30 s inactivity cut (k8s-client-node-notes §6).
 */
import {
  type CoreV1Api,
  type KubeConfig,
  type V1Node,
  type V1NodeCondition,
  Watch
} from "@kubernetes/client-node"

export interface ObservedCondition {
  readonly status: string
  readonly reason: string
  readonly message: string
  /** performance.timeOrigin-based ms when the watch event arrived. */
  readonly receivedAtMs: number
}

export interface NodeConditionWatch {
  readonly history: readonly ObservedCondition[]
  readonly latest: () => ObservedCondition | undefined
  /** Resolves with the first observation (after `afterIndex`) that satisfies `pred`. */
  readonly next: (
    pred: (c: ObservedCondition) => boolean,
    timeoutMs?: number,
    afterIndex?: number
  ) => Promise<ObservedCondition>
  readonly stop: () => void
}

export const watchNodeCondition = async (
  kc: KubeConfig,
  core: CoreV1Api,
  nodeName: string,
  type: string
): Promise<NodeConditionWatch> => {
  const history: ObservedCondition[] = []
  const waiters = new Set<() => void>()
  const record = (n: V1Node) => {
    const c: V1NodeCondition | undefined = n.status?.conditions?.find((x) => x.type === type)
    if (c === undefined) return
    const last = history.at(-1)
    if (last?.status === c.status && last.reason === c.reason && last.message === c.message) return
    history.push({
      status: c.status,
      reason: c.reason ?? "",
      message: c.message ?? "",
      receivedAtMs: performance.now()
    })
    for (const w of waiters) w()
  }
  const w = new Watch(kc)
  let rv = ""
  let stopped = false
  let ctl: AbortController | undefined
  const first = await core.listNode({ fieldSelector: `metadata.name=${nodeName}` })
  for (const n of first.items) record(n)
  rv = first.metadata?.resourceVersion ?? ""
  const run = async (): Promise<void> => {
    if (stopped) return
    try {
      ctl = await w.watch(
        "/api/v1/nodes",
        {
          fieldSelector: `metadata.name=${nodeName}`,
          resourceVersion: rv,
          allowWatchBookmarks: true,
          timeoutSeconds: 25
        },
        (t, obj) => {
          if (t === "ERROR") return
          rv = obj?.metadata?.resourceVersion ?? rv
          if (t !== "BOOKMARK") record(obj as V1Node)
        },
        (err) => {
          if (stopped) return
          setTimeout(() => void run(), !err || (err as Error).name === "TimeoutError" ? 0 : 500)
        }
      )
    } catch {
      setTimeout(() => void run(), 500)
    }
  }
  await run()
  const next = (pred: (c: ObservedCondition) => boolean, timeoutMs = 30_000, afterIndex = 0) =>
    new Promise<ObservedCondition>((resolve, reject) => {
      const check = () => {
        const hit = history.slice(afterIndex).find(pred)
        if (hit === undefined) return false
        waiters.delete(check)
        clearTimeout(timer)
        resolve(hit)
        return true
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(
          new Error(
            `node ${nodeName}: no ${type} matching within ${timeoutMs} ms; seen ${JSON.stringify(history)}`
          )
        )
      }, timeoutMs)
      if (!check()) waiters.add(check)
    })
  return {
    history,
    latest: () => history.at(-1),
    next,
    stop: () => {
      stopped = true
      ctl?.abort()
    }
  }
}
