/** Everything a reconcile needs, assembled once by `Controller.ts`: the steps' ports and the controller's own. */
import type { Ref } from "effect"
import type { StepPorts } from "../actions/executeStep.ts"
import type { TaintFirst } from "../actions/TaintFirst.ts"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { Decision } from "../decide/decide.ts"
import type { ShiftObservation } from "../decide/zonalShiftGate.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import type { Inventory } from "../owner/Inventory.ts"
import type { Placements } from "../owner/Placements.ts"
import type { PreProofs } from "../owner/PreProofs.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { BlockedNodes } from "./BlockedNodes.ts"
import type { DrainPool } from "./DrainPool.ts"
import type { NodeCache } from "./NodeCache.ts"
import type { RebootStore } from "./RebootStore.ts"
import type { RelapseStore } from "./RelapseStore.ts"
import type { PlannedRepairStore } from "./PlannedRepairStore.ts"
import type { ScheduledEventWatch } from "./ScheduledEventWatch.ts"
import type { RepairRequestWatch } from "./RepairRequestWatch.ts"
import type { RepairStore } from "./RepairStore.ts"
import type { SightingStore } from "./SightingStore.ts"
import type { WaitingRoom } from "./WaitingRoom.ts"
import type { WorkQueue } from "./WorkQueue.ts"

export interface ControllerEnv extends StepPorts {
  readonly config: ControllerConfig
  readonly kube: KubeShape
  readonly cloud: CloudProvider["Service"]
  readonly events: EventRecorder
  readonly taintFirst: TaintFirst
  readonly cache: NodeCache
  readonly shifts: Ref.Ref<ShiftObservation>
  readonly store: RepairStore
  /** Relapse ledgers per pool and reason, and their holds (journal: RelapseStore.ts). */
  readonly relapse: RelapseStore
  /** Reboot repairs that ended well, per node: a fault back soon after one escalates (journal: RebootStore.ts). */
  readonly reboots: RebootStore
  /** The controller's first sight of each unhealthy status, where tolerations start (journal: SightingStore.ts). */
  readonly sightings: SightingStore
  /** The cloud's scheduled events of the Nodes' machines, which plan repairs (controller/plannedRepair.ts). */
  readonly scheduled: ScheduledEventWatch
  /** The events a repair was started for, and each node's plan as last decided (journal: PlannedRepairStore.ts). */
  readonly plannedRepairs: PlannedRepairStore
  /** RepairRequests of the controller's namespace and the proof of who asked (controller/requestedRepair.ts). */
  readonly requests: RepairRequestWatch
  /** Due repairs waiting for a slot of their pool, in the queue's order (decide/order.ts). */
  readonly waiting: WaitingRoom
  /** The cloud's answers about nodes whose toleration is about to expire, asked ahead of the decision. */
  readonly preProofs: PreProofs
  /** Unhealthy nodes' proven pool and zone: where they count (breaker, zone breaker, relapse ledgers). */
  readonly placements: Placements
  /** Every node's placement by the cloud's fleet inventory: where healthy nodes count. */
  readonly inventory: Inventory
  readonly queue: WorkQueue
  /** Bounds the drains in flight; taints do not wait for it. */
  readonly drains: DrainPool
  /** Nodes the breaker holds back, woken when their pool's count drops. */
  readonly blocked: BlockedNodes
  /** Told every decision as it is made: the what-if replay's record of them (whatif/replay.ts); live, none. */
  readonly decided?: DecisionLog
  /** Writes the breaker/pool gauges of the pools whose counts moved (so a scrape right after an Event agrees). */
  readonly flushPoolMetrics: () => void
}

export type DecisionLog = (node: NodeView, d: Decision, at: number) => void
