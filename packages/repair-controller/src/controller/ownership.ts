/**
 * Who owns a node, from what no node can write: a Karpenter NodeClaim whose status names this Node (Karpenter
 * wrote it), else the cloud's description of its instance (its Auto Scaling group, Karpenter's tags, its launch
 * template). nodemend then acts through that owner only. Unknown ownership, or an instance that says it is
 * Karpenter's while no NodeClaim claims it, is refused: no owner, no repair (fail closed).
 */
import { Effect } from "effect"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { InstanceFacts } from "../domain/Instance.ts"
import type { NodeView } from "../domain/NodeView.ts"
import { KARPENTER_REGISTERED_LABEL, karpenterIsActing, poolOf } from "../karpenter/NodeClaims.ts"
import { nodeRef } from "../kube/views.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

export type Ownership =
  | { readonly _tag: "Owned"; readonly facts: InstanceFacts }
  /** Not ours to touch (now): why, and whether it is a refusal (Warning) or Karpenter at work (Normal). */
  | { readonly _tag: "Refused"; readonly why: string; readonly cause: "unknown-owner" | "identity" | "cloud" }
  | { readonly _tag: "KarpenterActing"; readonly why: string }
  | { readonly _tag: "Retry"; readonly error: string }

export const ownershipOf = (env: ControllerEnv, node: NodeView): Effect.Effect<Ownership> =>
  Effect.gen(function* () {
    const claim = env.karpenter.claimOf(node.providerID)
    if (claim !== undefined) {
      const name = claim.metadata.name
      if (claim.status?.nodeName !== undefined && claim.status.nodeName !== node.name)
        return {
          _tag: "Refused",
          cause: "identity",
          why: `NodeClaim ${name} with this providerID belongs to node ${claim.status.nodeName}`
        } as const
      const acting = karpenterIsActing(claim)
      if (acting !== undefined) return { _tag: "KarpenterActing", why: acting } as const
      const pool = poolOf(claim)
      const zone = claim.metadata.labels?.[ZONE_LABEL]
      const facts: InstanceFacts = {
        instanceId: node.providerID ?? "",
        state: "running",
        ...(zone !== undefined ? { zone } : {}),
        ...(pool !== undefined ? { pool } : {}),
        launch: {},
        owner: { kind: "karpenter", nodeClaim: name, ...(pool !== undefined ? { nodePool: pool } : {}) }
      }
      return { _tag: "Owned", facts } as const
    }
    // A node that says it is Karpenter's without a NodeClaim to show for it is refused: a label a node writes
    // itself can only ever stop its own repair this way, never start one.
    if (node.labels[KARPENTER_REGISTERED_LABEL] !== undefined)
      return {
        _tag: "Refused",
        cause: "unknown-owner",
        why: `unknown owner: the node carries ${KARPENTER_REGISTERED_LABEL} but no NodeClaim ${env.karpenter.present() ? "has its providerID" : "can be read"}`
      } as const
    const inspected = yield* Effect.result(env.cloud.inspect(nodeRef(node)))
    if (inspected._tag === "Failure") {
      const e = inspected.failure
      if (e._tag === "CloudError" && e.retryable) return { _tag: "Retry", error: e.message } as const
      return {
        _tag: "Refused",
        cause: e._tag === "CloudError" ? "cloud" : "identity",
        why: e.message
      } as const
    }
    const facts = inspected.success
    const owner = facts.owner
    if (owner.kind === "karpenter")
      return {
        _tag: "Refused",
        cause: "unknown-owner",
        why: `unknown owner: instance ${facts.instanceId} is tagged as Karpenter's (NodeClaim ${owner.nodeClaim || "?"}) but no NodeClaim ${env.karpenter.present() ? "has its providerID" : "exists (Karpenter's CRDs are not installed)"}`
      } as const
    if (owner.kind === "unknown")
      return { _tag: "Refused", cause: "unknown-owner", why: `unknown owner: ${owner.why}` } as const
    return { _tag: "Owned", facts } as const
  })
