/** The instance behind a Node as the cloud describes it: the core's vocabulary for cloud facts. */

export type InstanceState =
  | "pending"
  | "running"
  | "stopping"
  | "stopped"
  | "shutting-down"
  | "terminated"
  /** The provider has no record of it (long terminated, or never existed). Counts as gone. */
  | "not-found"

export interface Replacement {
  readonly instanceId: string
  /** The Node name the replacement will register as, when known up front. */
  readonly nodeName?: string
  readonly zone?: string
}

/**
 * What the cloud says about the instance behind a Node, read once before a repair touches the node and kept in
 * the controller's journal: the replacement is built from these facts, never from what the node says of itself
 * (its labels and annotations are node-writable).
 */
export interface InstanceFacts {
  readonly instanceId: string
  readonly state: InstanceState
  readonly zone?: string
  /** The pool the cloud puts the instance in (its `poolLabel` tag), when it says. */
  readonly pool?: string
  /** Provider-specific launch facts (instance type, subnet, launch template...), as the cloud reports them. */
  readonly launch: Readonly<Record<string, string>>
  /** Who brings the replacement up: nodemend, the instance's Auto Scaling group, or nobody (and why). */
  readonly replacer: Replacer
}

export type Replacer =
  | { readonly by: "nodemend" | "autoScaling" }
  | { readonly by: "none"; readonly why: string }

export interface ZonalShift {
  readonly kind: "zonal-shift" | "autoshift"
  /** Availability zone name (`us-west-2a`) when known. */
  readonly zone?: string
  /** Availability zone id (`usw2-az1`); ARC speaks zone ids. */
  readonly zoneId?: string
  readonly expiresAt: Date
  readonly id?: string
}
