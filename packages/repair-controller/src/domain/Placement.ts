/**
 * Where a node counts (its pool and zone) for the breaker, the zone breaker and the relapse ledgers: proven from
 * facts the node cannot write (its owner's answer: the NodeClaim's NodePool, the instance's pool tag and placement
 * zone), never read from its labels. A node can write its own labels (docs/security.md).
 */
export type Placement =
  /** Proven for this very Node (uid and providerID); `undefined`: no pool (the cluster scope) / no zone. */
  | { readonly _tag: "Proven"; readonly pool: string | undefined; readonly zone: string | undefined }
  /** Not proven yet (the owner's answer is on its way, or the cloud asked to retry). */
  | { readonly _tag: "Pending" }
  /** The cloud does not vouch for the machine behind the Node: it counts in no pool and no zone. */
  | { readonly _tag: "Unprovable"; readonly why: string }
