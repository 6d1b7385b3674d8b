/**
 * Karpenter's objects as nodemend reads and writes them, pure: a NodeClaim (one node's capacity, the join to its
 * Node is `status.providerID`), a NodePool (its disruption budgets and our veto annotation), and the NodeClaim
 * nodemend creates to replace a broken node (a copy of the broken one's spec, so Karpenter launches the same kind
 * of capacity through its own cloud provider). Decoded with Schema: everything here comes from the API server.
 */
import { Schema } from "effect"

export const KARPENTER_API = "/apis/karpenter.sh/v1"
export const NODECLAIMS_PATH = `${KARPENTER_API}/nodeclaims`
export const NODEPOOLS_PATH = `${KARPENTER_API}/nodepools`
export const NODEPOOL_LABEL = "karpenter.sh/nodepool"
export const DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
export const UNREGISTERED_TAINT = "karpenter.sh/unregistered"
export const DISRUPTED_TAINT = "karpenter.sh/disrupted"
/** The label Karpenter puts on the Nodes it registered. */
export const KARPENTER_REGISTERED_LABEL = "karpenter.sh/registered"
/** Annotations Karpenter copies from its NodePool to NodeClaims (drift detection compares the hash). */
const COPIED_ANNOTATION =
  /^(karpenter\.sh\/nodepool-hash|karpenter\.sh\/nodepool-hash-version|karpenter\.k8s\.aws\/)/

const Condition = Schema.Struct({
  type: Schema.String,
  status: Schema.String,
  reason: Schema.optionalKey(Schema.String)
})
const Meta = Schema.Struct({
  name: Schema.String,
  uid: Schema.optionalKey(Schema.String),
  labels: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  annotations: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  deletionTimestamp: Schema.optionalKey(Schema.String),
  ownerReferences: Schema.optionalKey(Schema.Array(Schema.Record(Schema.String, Schema.Unknown)))
})

export const NodeClaim = Schema.Struct({
  metadata: Meta,
  spec: Schema.Record(Schema.String, Schema.Unknown),
  status: Schema.optionalKey(
    Schema.Struct({
      providerID: Schema.optionalKey(Schema.String),
      nodeName: Schema.optionalKey(Schema.String),
      conditions: Schema.optionalKey(Schema.Array(Condition))
    })
  )
})
export type NodeClaim = typeof NodeClaim.Type

const Budget = Schema.Struct({
  nodes: Schema.String,
  reasons: Schema.optionalKey(Schema.Array(Schema.String)),
  schedule: Schema.optionalKey(Schema.String),
  duration: Schema.optionalKey(Schema.String)
})
export type Budget = typeof Budget.Type

export const NodePool = Schema.Struct({
  metadata: Meta,
  spec: Schema.optionalKey(
    Schema.Struct({
      template: Schema.optionalKey(
        Schema.Struct({
          metadata: Schema.optionalKey(
            Schema.Struct({ labels: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)) })
          )
        })
      ),
      disruption: Schema.optionalKey(Schema.Struct({ budgets: Schema.optionalKey(Schema.Array(Budget)) }))
    })
  )
})
export type NodePool = typeof NodePool.Type

export const decodeNodeClaim = Schema.decodeUnknownResult(NodeClaim)
export const decodeNodePool = Schema.decodeUnknownResult(NodePool)

const condition = (c: NodeClaim, type: string) => c.status?.conditions?.find((x) => x.type === type)

export const poolOf = (c: NodeClaim): string | undefined => c.metadata.labels?.[NODEPOOL_LABEL]

/**
 * Why Karpenter is already taking this node away (its own repair, or any disruption), or undefined. nodemend then
 * leaves the node alone: two controllers draining and replacing one node double the launches.
 */
export const karpenterIsActing = (c: NodeClaim): string | undefined => {
  if (c.metadata.deletionTimestamp !== undefined) return `its NodeClaim ${c.metadata.name} is being deleted`
  const d = condition(c, "DisruptionReason")
  if (d !== undefined && d.status === "True")
    return `Karpenter is disrupting NodeClaim ${c.metadata.name} (${d.reason ?? "DisruptionReason"})`
  return undefined
}

/** Launched, registered and initialized: Karpenter's own test for capacity that can take pods. */
export const isInitialized = (c: NodeClaim): boolean => condition(c, "Initialized")?.status === "True"

/**
 * The NodeClaim that replaces `old`: its spec (requirements, nodeClassRef, resources, taints...) with zones
 * `avoidZones` excluded, its NodePool labels and hash annotations (so it is not drifted) and owner, named after the
 * repair (a repeat after a crash finds the same object), marked do-not-disrupt so consolidation does not remove
 * it while it is still empty, and annotated with the node it replaces (an annotation: node names outgrow label values). Labels: the NodePool's and its template's
 * only (the old claim's zone, type and lifecycle labels describe the old instance, not the new one).
 */
export const replacementNodeClaim = (
  old: NodeClaim,
  pool: NodePool | undefined,
  args: {
    readonly name: string
    readonly replacesNode: string
    readonly replacementOfLabel: string
    readonly avoidZones: ReadonlyArray<string>
  }
) => {
  const poolName = poolOf(old)
  const labels = {
    ...(pool?.spec?.template?.metadata?.labels ?? {}),
    ...(poolName !== undefined ? { [NODEPOOL_LABEL]: poolName } : {})
  }
  const annotations = Object.fromEntries(
    Object.entries(old.metadata.annotations ?? {}).filter(([k]) => COPIED_ANNOTATION.test(k))
  )
  const requirements = (
    Array.isArray(old.spec.requirements) ? old.spec.requirements : []
  ) as ReadonlyArray<unknown>
  const zoneRule =
    args.avoidZones.length > 0
      ? [{ key: "topology.kubernetes.io/zone", operator: "NotIn", values: [...args.avoidZones] }]
      : []
  return {
    apiVersion: "karpenter.sh/v1",
    kind: "NodeClaim",
    metadata: {
      name: args.name,
      labels,
      annotations: {
        ...annotations,
        [DO_NOT_DISRUPT_ANNOTATION]: "true",
        [args.replacementOfLabel]: args.replacesNode
      },
      ...(old.metadata.ownerReferences !== undefined ? { ownerReferences: old.metadata.ownerReferences } : {})
    },
    spec: { ...old.spec, requirements: [...requirements, ...zoneRule] }
  }
}

/** A DNS-1123 name for the replacement NodeClaim of a repair: `<old claim>-r-<repair id>`, at most 63 chars. */
export const replacementName = (oldClaim: string, repairId: string): string => {
  const suffix = `-r-${repairId.toLowerCase().replace(/[^a-z0-9-]/g, "")}`
  return `${oldClaim.slice(0, 63 - suffix.length)}${suffix}`.replace(/^-+/, "")
}
