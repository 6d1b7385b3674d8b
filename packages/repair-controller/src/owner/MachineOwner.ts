/**
 * The owner port (issue #25): every machine has exactly one owner, and nodemend adds and removes capacity only
 * through it. Karpenter (NodeClaims), an Auto Scaling group, a launch template (standalone EC2) and kwok are its
 * adapters; `Owners.of` picks one from the record, and no step asks which. Identity is proven once for every
 * owner, the same way (ownership.ts), before a record exists.
 */
import type { Effect } from "effect"
import type { KubeError } from "@nodemend/kube-access"
import type { CloudError, InvalidProviderID } from "../cloud/CloudProvider.ts"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { KarpenterCache } from "../karpenter/KarpenterCache.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { CachedNodes } from "../kube/stepPorts.ts"
import type { Outcome } from "../repair/outcome.ts"

export type OwnerFailure = KubeError | CloudError | InvalidProviderID

/**
 * One owner's steps. Each observes before it mutates and reports a Fact or "wait", so any of them may be
 * repeated after a crash. Progress (the member a group launched, the Node a NodeClaim registered) is reported as
 * `ReplacementProgress`, which the runner journals.
 */
export interface MachineOwner {
  /** Who acts for the repair, for its Events ("Auto Scaling group g-1"). */
  readonly name: (r: RepairRecord) => string
  /** Asks for the replacement capacity. */
  readonly addCapacity: (r: RepairRecord) => Effect.Effect<Outcome, OwnerFailure>
  /** Waits for it to be Ready, reporting progress, until `timesOutAt`. */
  readonly awaitCapacity: (r: RepairRecord, timesOutAt: number) => Effect.Effect<Outcome, OwnerFailure>
  /** Starts removing the old machine. */
  readonly removeMachine: (r: RepairRecord) => Effect.Effect<Outcome, OwnerFailure>
  readonly awaitMachineGone: (r: RepairRecord) => Effect.Effect<Outcome, OwnerFailure>
  /** The old Node object goes (deleted by nodemend, or by the owner and waited for). */
  readonly removeNode: (r: RepairRecord) => Effect.Effect<Outcome, OwnerFailure>
  /** The repair ended: whatever it held back from the owner is the owner's again. Idempotent. */
  readonly release: (r: RepairRecord) => Effect.Effect<void, OwnerFailure>
  /** Why no replacement can come from this owner (absent: one can); a reboot that did not heal then ends Failed. */
  readonly cannotReplace?: string
}

/** What the adapters use: the Kubernetes API, the informer's Nodes, Events, the cloud, Karpenter's objects. */
export interface OwnerPorts {
  readonly kube: KubeShape
  readonly cache: CachedNodes
  readonly events: EventRecorder
  readonly cloud: CloudProvider["Service"]
  /** NodeClaims and NodePools, when Karpenter is installed. */
  readonly karpenter: KarpenterCache
  /** The zones a replacement avoids now (active zonal shifts). */
  readonly avoidZones: Effect.Effect<ReadonlyArray<string>>
  /** The journal's records as they stand (in flight and kept failed): what other repairs of a group hold. */
  readonly repairs: () => ReadonlyArray<RepairRecord>
}
