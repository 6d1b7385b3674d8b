/**
 * The cloud behind the repair controller. Implementations: `kwok` (in-cluster, issue #4), `aws`
 * (EC2 + ARC, issue #5). Every call is idempotent: the controller may repeat any of them after a crash.
 */
import { Context, Data, type Effect } from "effect"
import type {
  InstanceFacts,
  InstanceState,
  Location,
  Replacement,
  ScheduledEvent,
  ZonalShift
} from "../domain/Instance.ts"
import type { NodeRef } from "../domain/NodeView.ts"

export type {
  InstanceFacts,
  InstanceState,
  Location,
  Owner,
  Replacement,
  ScheduledEvent,
  ScheduledEventCode,
  ZonalShift
} from "../domain/Instance.ts"
export type { NodeRef } from "../domain/NodeView.ts"

/** The instance named by a Node's providerID is not that Node's (a forged or stale providerID). */
export class InstanceMismatch extends Data.TaggedError("InstanceMismatch")<{
  readonly node: string
  readonly providerID: string
  readonly message: string
}> {}

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

/** How a replacement is asked for (see `CloudProvider.launchReplacement`). */
export interface LaunchOptions {
  readonly facts: InstanceFacts
  readonly avoidZones: ReadonlyArray<string>
  readonly idempotencyToken: string
  readonly capacityFirst?: boolean
  readonly previous?: Replacement
  readonly requestedAtMs?: number
  /** Auto Scaling, remove first: the group's members before the old one was terminated (the repair's record). */
  readonly membersBefore?: ReadonlyArray<string>
  /**
   * Auto Scaling: the other repairs of the same group as their records stand, read when the group is locked:
   * the members they claimed and the sizes they planned (the cross-repair view, never kept by the provider).
   */
  readonly others?: () => ReadonlyArray<GroupRepair>
}

/** Another repair of the same Auto Scaling group, from its journal record. */
export interface GroupRepair {
  /** The instance it replaces. */
  readonly replaces: string
  readonly replacement: Replacement | undefined
  /** Succeeded or Failed: a size it planned and did not set is no longer wanted; a member it claimed stays its. */
  readonly ended: boolean
}

/**
 * A provider's Auto Scaling groups (AWS): a member's replacement comes from its group (grown by one for capacity
 * first, or launched by the group when the old member goes without decrement), never from RunInstances; asked
 * again with `previous`, it reports the member the group launched and grows nothing more.
 */
export interface AutoScalingPort {
  /** A member's replacement through `group`, the group its owner proved (owner/autoScalingOwner.ts). */
  readonly launchReplacement: (
    node: NodeRef,
    group: string,
    options: LaunchOptions
  ) => Effect.Effect<Replacement, CloudError | InvalidProviderID>
  /**
   * Remove first: the group and its members before `node`'s instance is terminated without decrement, for the
   * record (journaled before `terminate`); none when it is in no group or already leaving it (nothing to record).
   */
  readonly membersBeforeRemoval: (
    node: NodeRef
  ) => Effect.Effect<
    { readonly group: string; readonly members: ReadonlyArray<string> } | undefined,
    CloudError | InvalidProviderID
  >
}

/** What a live machine's type promises in GPUs, as the cloud reports it (`CloudProvider.promisedGpus`). */
export interface PromisedGpus {
  readonly instanceId: string
  readonly instanceType: string
  /** NVIDIA GPUs (the `nvidia.com/gpu` resource); 0 for a type without them. */
  readonly gpus: number
}

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
    /**
     * Starts termination; an instance already shutting-down/terminated/not-found counts as done. `replaced`: its
     * replacement is already up (capacity first), so an Auto Scaling group shrinks back instead of launching one.
     */
    readonly terminate: (
      node: NodeRef,
      options?: { readonly replaced?: boolean }
    ) => Effect.Effect<InstanceState, CloudError | InvalidProviderID>
    readonly reboot: (node: NodeRef) => Effect.Effect<void, CloudError | InvalidProviderID>
    /**
     * Launches a standalone machine's replacement from the inspected `facts` (type, subnet, template, pool),
     * avoiding `avoidZones`, idempotent on `idempotencyToken`, and reports what is known of it; asked again with
     * `previous`, it launches nothing more. A replacement that cannot be had fails with a non-retryable CloudError.
     */
    readonly launchReplacement: (
      node: NodeRef,
      options: LaunchOptions
    ) => Effect.Effect<Replacement, CloudError | InvalidProviderID>
    /** Where the provider has Auto Scaling groups. */
    readonly autoScaling?: AutoScalingPort
    /**
     * The fleet inventory, batched: where the cloud places the machine behind each of `nodes`, keyed by Node name.
     * A name is answered only when the cloud binds it to a live machine as `inspect` does (EC2: its private DNS name
     * or id is the Node's name); a name it does not know is absent. Asked for every Node, healthy ones included, so
     * one call covers many Nodes (owner/Inventory.ts).
     */
    readonly locate: (
      nodes: ReadonlyArray<NodeRef>
    ) => Effect.Effect<ReadonlyMap<string, Location>, CloudError>
    /**
     * `locate`'s answer for a Node never changes while that Node lives (kwok: the machine is the Node, placed by the
     * labels it had when first asked), so the inventory's periodic refresh would only ask the same again: skipped.
     */
    readonly placementsFixed?: boolean
    /**
     * The scheduled events of the machines behind `nodes`, batched (EC2: DescribeInstanceStatus, 100 instances a
     * call), keyed by Node name; a Node whose machine has none (or that the cloud does not know) is absent. Ended
     * events are reported with `ended` set. Absent where the provider has no scheduled events. The controller
     * asks every `scheduledEvents.refreshSeconds` and keeps the answer in between (controller/ScheduledEventWatch.ts).
     */
    readonly scheduledEvents?: (
      nodes: ReadonlyArray<NodeRef>
    ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<ScheduledEvent>>, CloudError>
    /**
     * The GPUs the type of the live machine named `nodeName` promises (EC2: the Node's name bound to its instance as
     * `inspect` binds it, DescribeInstanceTypes for its type), which the replacement health gate requires; undefined
     * while the cloud does not know such a machine. Absent where the provider has no such facts (kwok: the repair's
     * record fixes the expected count from the launch facts or the repaired node, ADR 0019).
     */
    readonly promisedGpus?: (nodeName: string) => Effect.Effect<PromisedGpus | undefined, CloudError>
    /** Active (applied and unexpired) zonal shifts and autoshifts. Fails when the provider cannot answer. */
    readonly activeZonalShifts: Effect.Effect<ReadonlyArray<ZonalShift>, CloudError>
  }
>()("nodemend/CloudProvider") {}
