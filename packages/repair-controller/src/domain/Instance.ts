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

/**
 * The capacity that takes a repaired node's place, as far as it is known: an instance nodemend launched, a member
 * its Auto Scaling group launched (none yet while the group grows), or a NodeClaim Karpenter launches.
 */
export interface Replacement {
  readonly instanceId?: string
  /** The Node name the replacement will register as, when known. */
  readonly nodeName?: string
  readonly zone?: string
  /** The group grown by one for it (capacity first), and the absolute size it was grown to: never grown twice. */
  readonly autoScalingGroup?: string
  readonly desiredCapacity?: number
  /** The group was grown to `desiredCapacity` (set once, recorded before: a crash never grows it twice). */
  readonly groupGrown?: boolean
  /**
   * The group's members when the growth was planned, journaled with `desiredCapacity` before the group is grown:
   * the replacement is a member not among them, also after a restart.
   */
  readonly membersBefore?: ReadonlyArray<string>
  /** The NodeClaim nodemend created for it (Karpenter owner). */
  readonly nodeClaim?: string
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
  /** Who owns the instance, and so who replaces and removes it; nodemend acts through that owner only. */
  readonly owner: Owner
}

/**
 * Who owns a node's instance. Karpenter: its NodeClaim (replaced through a new NodeClaim, removed by deleting the
 * old one; never RunInstances). Auto Scaling: its group (grown and shrunk through the group). Standalone: nodemend
 * launches from the launch template EC2 recorded on it. Unknown: nobody nodemend can act through, so no repair.
 */
export type Owner =
  | { readonly kind: "karpenter"; readonly nodeClaim: string; readonly nodePool?: string }
  | { readonly kind: "autoScaling"; readonly group: string }
  | { readonly kind: "standalone" }
  | { readonly kind: "unknown"; readonly why: string }

export interface ZonalShift {
  readonly kind: "zonal-shift" | "autoshift"
  /** Availability zone name (`us-west-2a`) when known. */
  readonly zone?: string
  /** Availability zone id (`usw2-az1`); ARC speaks zone ids. */
  readonly zoneId?: string
  readonly expiresAt: Date
  readonly id?: string
}

/**
 * Where the cloud places a machine that a Node of the cluster runs on (the fleet inventory, `CloudProvider.locate`):
 * its zone and pool as the cloud records them. The breaker, the zone breaker and the metrics count healthy nodes
 * by it (owner/Inventory.ts), never by the labels a node writes on itself.
 */
export interface Location {
  readonly zone?: string
  readonly pool?: string
}

/** What the cloud says it will do to a machine at a scheduled time (EC2 `DescribeInstanceStatus` events). */
export type ScheduledEventCode =
  | "instance-retirement"
  | "instance-stop"
  | "system-reboot"
  | "instance-reboot"
  | "system-maintenance"

/**
 * A scheduled event of a Node's machine, as the cloud reports it. `ended`: completed or cancelled (EC2 keeps such
 * an event listed for up to a week, its description starting `[Completed]` or `[Canceled]`); it plans nothing.
 */
export interface ScheduledEvent {
  readonly id: string
  readonly code: ScheduledEventCode
  readonly description: string
  readonly notBefore: number
  readonly notAfter?: number
  readonly ended?: "completed" | "canceled"
}
