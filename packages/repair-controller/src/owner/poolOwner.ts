/**
 * What a pool's owner says about the pool, through the owner port (issue #40): Karpenter's NodePool is the one
 * owner with pool-wide facts today (its size by claims, disruption budgets, the do-not-disrupt veto), an API object
 * where the pool's Events go, and a queue of its own for the cloud's scheduled events. Auto Scaling groups,
 * standalone machines and kwok Nodes have none of these: their pools are counted by the fleet inventory alone.
 */
import type { NodePoolFacts } from "../domain/NodePool.ts"
import type { NodeView } from "../domain/NodeView.ts"
import { KARPENTER_API } from "../karpenter/NodeClaims.ts"
import type { KarpenterCache } from "../karpenter/KarpenterCache.ts"

/** The API object a pool's Events go on. */
export interface PoolObject {
  readonly name: string
  readonly uid: string
  readonly apiVersion: string
  readonly kind: string
}

export interface PoolOwner {
  /** The pool's facts from its owner, where it has any (a Karpenter NodePool's). */
  readonly facts: (pool: string | undefined) => NodePoolFacts | undefined
  /** The object where the pool's Events go, where there is one. */
  readonly object: (pool: string) => PoolObject | undefined
  /** Whether the node's owner registered this very Node (Karpenter alone writes a NodeClaim's `status.nodeName`). */
  readonly registered: (node: NodeView) => boolean
}

const NODEPOOL_API_VERSION = KARPENTER_API.replace(/^\/apis\//, "")

export const karpenterPools = (karpenter: KarpenterCache): PoolOwner => ({
  facts: (pool) => karpenter.poolFacts(pool),
  object: (pool) => {
    const uid = karpenter.nodePool(pool)?.metadata.uid
    return uid === undefined
      ? undefined
      : { name: pool, uid, apiVersion: NODEPOOL_API_VERSION, kind: "NodePool" }
  },
  registered: (node) => karpenter.claimOf(node.providerID)?.status?.nodeName === node.name
})
