/**
 * The narrow Kubernetes-side ports a repair step uses (issue #25): `Kube` (KubeShape), the informer's Nodes
 * (`CachedNodes`) and `Events` (EventRecorder); time is Effect's Clock. A step names only the ports it touches.
 */
import type { Node } from "@nodemend/kube-access"
import type { NodeRef } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "./EventRecorder.ts"
import { nodeRef } from "./views.ts"

/** The informer's Nodes as a step reads them (the controller's NodeCache). */
export interface CachedNodes {
  readonly get: (name: string) => Node | undefined
  readonly names: () => ReadonlyArray<string>
}

/** The node as the repair recorded it (controller-written journal), never as the node describes itself now. */
export const refOf = (r: RepairRecord): NodeRef =>
  nodeRef({ name: r.node.name, providerID: r.node.providerID, labels: r.node.labels })

export const nodeEvent = (
  events: EventRecorder,
  r: RepairRecord,
  type: "Normal" | "Warning",
  reason: string,
  note: string
) => events.emit({ node: { name: r.node.name, uid: r.node.uid }, type, reason, action: reason, note })

export const isReady = (cache: CachedNodes, name: string) =>
  cache.get(name)?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false
