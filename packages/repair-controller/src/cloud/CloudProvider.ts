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
    /** Current state of the node's instance. */
    readonly describe: (node: NodeRef) => Effect.Effect<InstanceState, CloudError | InvalidProviderID>
    /** Starts termination; an instance already shutting-down/terminated/not-found counts as done. */
    readonly terminate: (node: NodeRef) => Effect.Effect<InstanceState, CloudError | InvalidProviderID>
    readonly reboot: (node: NodeRef) => Effect.Effect<void, CloudError | InvalidProviderID>
    /** Launches a replacement with the node's pool labels and instance type, avoiding `avoidZones`. */
    readonly launchReplacement: (
      node: NodeRef,
      options: { readonly avoidZones: ReadonlyArray<string>; readonly idempotencyToken: string }
    ) => Effect.Effect<Replacement, CloudError | InvalidProviderID>
    /** Active (applied and unexpired) zonal shifts and autoshifts. Fails when the provider cannot answer. */
    readonly activeZonalShifts: Effect.Effect<ReadonlyArray<ZonalShift>, CloudError>
  }
>()("nodemend/CloudProvider") {}
