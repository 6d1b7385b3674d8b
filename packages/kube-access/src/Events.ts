/**
 * events.k8s.io/v1 Events about a Node, as the agent and the repair controller write them: named like
 * client-go's (`<node>.<hex nanoseconds><random>`; a generateName ending in "." is rejected by current API
 * servers), in `default` (a Node is cluster-scoped), with the field limits the API server enforces.
 */
import { randomBytes } from "node:crypto"
import { namespacedPath } from "./Paths.ts"

/** Node is cluster-scoped: its Events live in `default` (client-go, the agent, the controller, the plugin). */
export const NODE_EVENT_NAMESPACE = "default"

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (the API server rejects milliseconds). */
export const microTime = (ms: number = Date.now()): string =>
  new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

/** `<object>.<hex nanoseconds><8 random hex>`: unique across writers and within one millisecond. */
export const eventName = (objectName: string, nowMs: number = Date.now()): string =>
  `${objectName.slice(0, 200)}.${(BigInt(Math.floor(nowMs)) * 1_000_000n).toString(16)}${randomBytes(4).toString("hex")}`

export interface NodeEvent {
  /**
   * The object the Event is about: a Node, unless `apiVersion` and `kind` name another cluster-scoped kind (the
   * repair controller's Events on a Karpenter NodePool, as Karpenter's own NodeRepairBlocked).
   */
  readonly node: {
    readonly name: string
    readonly uid?: string | undefined
    readonly apiVersion?: string
    readonly kind?: string
  }
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly action: string
  readonly note: string
  readonly reportingController: string
  readonly reportingInstance: string
  /** When it happened; default now. */
  readonly atMs?: number
}

export const eventsPath = (namespace: string): string =>
  namespacedPath("events.k8s.io/v1", "events", namespace)

/** The body of a new events.k8s.io/v1 Event regarding a Node. */
export const nodeEventBody = (e: NodeEvent, namespace: string = NODE_EVENT_NAMESPACE) => {
  const at = e.atMs ?? Date.now()
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name: eventName(e.node.name, at), namespace },
    eventTime: microTime(at),
    regarding: {
      apiVersion: e.node.apiVersion ?? "v1",
      kind: e.node.kind ?? "Node",
      name: e.node.name,
      uid: e.node.uid
    },
    type: e.type,
    reason: e.reason.slice(0, 128),
    action: e.action.slice(0, 128),
    note: e.note.slice(0, 1024),
    reportingController: e.reportingController,
    reportingInstance: e.reportingInstance.slice(0, 128)
  }
}

/** Merge patch that raises an Event's series count (count >= 2). */
export const eventSeriesPatch = (count: number, nowMs: number = Date.now()) => ({
  series: { count, lastObservedTime: microTime(nowMs) }
})
