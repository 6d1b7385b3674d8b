/**
 * Who owns a node's machine, proven from facts no node can write, the same way for every owner: first the cloud
 * vouches that the machine behind the Node's providerID is this Node (EC2: its private DNS name or id is the Node's
 * name, the name the node's credentials were issued for; kwok: the providerID is `kwok://<the Node's name>`), then
 * the owner is read: a Karpenter NodeClaim that Karpenter registered to this very Node (`status.nodeName`) and
 * that the cloud does not attribute to anyone else, or the cloud's own description (Auto Scaling group, launch
 * template). A NodeClaim with the same providerID is no proof by itself: a node sets its own providerID while it is
 * empty, or re-creates its Node with any, and a claim that has launched but not registered yet names no Node at all
 * (docs/security.md). Unknown or contradictory ownership is refused: no owner, no repair (fail closed).
 */
import { Effect, Result } from "effect"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { InstanceFacts } from "../domain/Instance.ts"
import type { NodeView } from "../domain/NodeView.ts"
import {
  KARPENTER_REGISTERED_LABEL,
  karpenterIsActing,
  type NodeClaim,
  poolOf
} from "../karpenter/NodeClaims.ts"
import { nodeRef } from "../kube/views.ts"
import type { OwnerPorts } from "./MachineOwner.ts"

export type Ownership =
  | { readonly _tag: "Owned"; readonly facts: InstanceFacts }
  /**
   * Not ours to touch (now): why, and whether it is a refusal (Warning) or Karpenter at work (Normal). `facts`:
   * the cloud's, when it did vouch for the machine (its pool tag and zone still place the node: Placements.ts).
   */
  | {
      readonly _tag: "Refused"
      readonly why: string
      readonly cause: "unknown-owner" | "identity" | "cloud"
      readonly facts?: InstanceFacts
    }
  /** The machine's owner is already taking it away (Karpenter deleting its NodeClaim): nodemend leaves it be. */
  | {
      readonly _tag: "OwnerActing"
      readonly owner: string
      readonly why: string
      readonly facts: InstanceFacts
    }
  | { readonly _tag: "Retry"; readonly error: string }

const refusedFor =
  (facts: InstanceFacts) =>
  (cause: "unknown-owner" | "identity", why: string): Ownership => ({
    _tag: "Refused",
    cause,
    why,
    facts
  })

/**
 * The owner of a Node whose machine the cloud has already proven to be this Node (`proven`), given the NodeClaim
 * (if any) that carries the same providerID. Pure.
 */
export const ownershipVerdict = (args: {
  readonly node: NodeView
  readonly proven: InstanceFacts
  readonly claim: NodeClaim | undefined
  readonly karpenterPresent: boolean
}): Ownership => {
  const { node, proven, claim } = args
  const owner = proven.owner
  const refused = refusedFor(proven)
  if (claim !== undefined) {
    const name = claim.metadata.name
    const registered = claim.status?.nodeName
    if (registered === undefined)
      return refused(
        "identity",
        `NodeClaim ${name} has this providerID but Karpenter has registered no Node to it yet; only the Node it registers is its`
      )
    if (registered !== node.name)
      return refused("identity", `NodeClaim ${name} with this providerID belongs to node ${registered}`)
    if (owner.kind === "autoScaling")
      return refused(
        "identity",
        `NodeClaim ${name} has this providerID, but the cloud puts instance ${proven.instanceId} in Auto Scaling group ${owner.group}`
      )
    if (owner.kind === "karpenter" && owner.nodeClaim !== "" && owner.nodeClaim !== name)
      return refused(
        "identity",
        `NodeClaim ${name} has this providerID, but the cloud says instance ${proven.instanceId} was launched for NodeClaim ${owner.nodeClaim}`
      )
    const pool = poolOf(claim)
    const claimZone = claim.metadata.labels?.[ZONE_LABEL]
    if (proven.zone !== undefined && claimZone !== undefined && proven.zone !== claimZone)
      return refused(
        "identity",
        `NodeClaim ${name} says zone ${claimZone}, the cloud puts instance ${proven.instanceId} in ${proven.zone}`
      )
    const zone = proven.zone ?? claimZone
    const facts: InstanceFacts = {
      instanceId: proven.instanceId,
      state: proven.state,
      ...(zone !== undefined ? { zone } : {}),
      ...(pool !== undefined ? { pool } : {}),
      launch: {},
      owner: { kind: "karpenter", nodeClaim: name, ...(pool !== undefined ? { nodePool: pool } : {}) }
    }
    const acting = karpenterIsActing(claim)
    if (acting !== undefined) return { _tag: "OwnerActing", owner: "Karpenter", why: acting, facts }
    return { _tag: "Owned", facts }
  }
  // A node that says it is Karpenter's without a NodeClaim to show for it is refused: a label a node writes
  // itself can only ever stop its own repair this way, never start one.
  const readable = args.karpenterPresent ? "has its providerID" : "can be read"
  if (node.labels[KARPENTER_REGISTERED_LABEL] !== undefined)
    return refused(
      "unknown-owner",
      `unknown owner: the node carries ${KARPENTER_REGISTERED_LABEL} but no NodeClaim ${readable}`
    )
  if (owner.kind === "karpenter")
    return refused(
      "unknown-owner",
      `unknown owner: instance ${proven.instanceId} is tagged as Karpenter's (NodeClaim ${owner.nodeClaim || "?"}) but no NodeClaim ${args.karpenterPresent ? "has its providerID" : "exists (Karpenter's CRDs are not installed)"}`
    )
  if (owner.kind === "unknown") return refused("unknown-owner", `unknown owner: ${owner.why}`)
  return { _tag: "Owned", facts: proven }
}

/**
 * The one proof for every owner: the cloud vouches for the machine first, then the verdict names its owner.
 * `vouched`: the cloud's answer for this very Node, asked shortly before (PreProofs.ts); the verdict is still
 * computed now, from the NodeClaim as it is now.
 */
export const proveOwner = (
  env: Pick<OwnerPorts, "cloud" | "karpenter">,
  node: NodeView,
  vouched?: InstanceFacts
): Effect.Effect<Ownership> =>
  Effect.gen(function* () {
    const inspected =
      vouched !== undefined ? Result.succeed(vouched) : yield* Effect.result(env.cloud.inspect(nodeRef(node)))
    if (inspected._tag === "Failure") {
      const e = inspected.failure
      if (e._tag === "CloudError" && e.retryable) return { _tag: "Retry", error: e.message } as const
      return {
        _tag: "Refused",
        cause: e._tag === "CloudError" ? "cloud" : "identity",
        why: e.message
      } as const
    }
    return ownershipVerdict({
      node,
      proven: inspected.success,
      claim: env.karpenter.claimOf(node.providerID),
      karpenterPresent: env.karpenter.present()
    })
  })
