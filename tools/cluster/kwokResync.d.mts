// Types for kwokResync.mjs (the second look at Pods kwok v0.8.0 dropped; see the top of kwokResync.mjs).
import type { V1Lease, V1Node, V1Pod } from "@kubernetes/client-node"
export declare const KWOK_RESYNC_ANNOTATION: string
/** The Pods kwok has provably dropped: Pending on a Node it manages whose Lease it renewed since they were created. */
export declare function droppedPods(
  pods: ReadonlyArray<V1Pod>,
  nodes: ReadonlyArray<V1Node>,
  leases: ReadonlyArray<V1Lease>,
  now?: number,
  minAgeMs?: number
): V1Pod[]
/** Gives each Pod kwok dropped (only `namespace`'s when given) the event kwok then plays; returns `namespace/name`s. */
export declare function resyncDroppedPods(opts?: {
  stateDir?: string
  namespace?: string
  minAgeMs?: number
}): Promise<string[]>
