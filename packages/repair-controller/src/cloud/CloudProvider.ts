/**
 * The cloud behind the repair controller. Implementations: `kwok` (in-cluster, issue #4), `aws`
 * (EC2 + ARC, issue #5). Every call is idempotent: the controller may repeat any of them after a crash.
 */
import { Context, Data, type Effect } from "effect"

/** The parts of a Node the cloud provider needs. */
export interface NodeRef {
  readonly name: string
  /** `spec.providerID`, e.g. `aws:///us-west-2a/i-0123456789abcdef0` or `kwok://node-1`. */
  readonly providerID: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
}

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

/** The instance named by a Node's providerID is not that Node's (a forged or stale providerID). */
export class InstanceMismatch extends Data.TaggedError("InstanceMismatch")<{
  readonly node: string
  readonly providerID: string
  readonly message: string
}> {}

export interface ZonalShift {
  readonly kind: "zonal-shift" | "autoshift"
  /** Availability zone name (`us-west-2a`) when known. */
  readonly zone?: string
  /** Availability zone id (`usw2-az1`); ARC speaks zone ids. */
  readonly zoneId?: string
  readonly expiresAt: Date
  readonly id?: string
}

export class InvalidProviderID extends Data.TaggedError("InvalidProviderID")<{
  readonly providerID: string
  readonly message: string
}> {}

export class CloudError extends Data.TaggedError("CloudError")<{
  readonly operation: string
  readonly message: string
  /** True when repeating the same call may succeed (throttling, 5xx, timeouts). */
  readonly retryable: boolean
  readonly cause?: unknown
}> {}

export class CloudProvider extends Context.Service<
  CloudProvider,
  {
    readonly name: string
    /**
     * The instance behind `node`, after checking with the cloud that it is that node's (its private DNS name or
     * id is the node's name). Fails with InstanceMismatch when it is not, InvalidProviderID when unreadable.
     */
    readonly inspect: (
      node: NodeRef
    ) => Effect.Effect<InstanceFacts, CloudError | InvalidProviderID | InstanceMismatch>
    /** Current state of the node's instance. */
    readonly describe: (node: NodeRef) => Effect.Effect<InstanceState, CloudError | InvalidProviderID>
    /** Starts termination; an instance already shutting-down/terminated/not-found counts as done. */
    readonly terminate: (node: NodeRef) => Effect.Effect<InstanceState, CloudError | InvalidProviderID>
    readonly reboot: (node: NodeRef) => Effect.Effect<void, CloudError | InvalidProviderID>
    /** Launches a replacement from the inspected `facts` (type, subnet, template, pool), avoiding `avoidZones`. */
    readonly launchReplacement: (
      node: NodeRef,
      options: {
        readonly facts: InstanceFacts
        readonly avoidZones: ReadonlyArray<string>
        readonly idempotencyToken: string
      }
    ) => Effect.Effect<Replacement, CloudError | InvalidProviderID>
    /** Active (applied and unexpired) zonal shifts and autoshifts. Fails when the provider cannot answer. */
    readonly activeZonalShifts: Effect.Effect<ReadonlyArray<ZonalShift>, CloudError>
  }
>()("nodemend/CloudProvider") {}
