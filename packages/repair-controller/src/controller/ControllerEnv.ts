/** Everything a reconcile needs, assembled once by `Controller.ts`. */
import type { Ref } from "effect"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { ShiftObservation } from "../decide/zonalShiftGate.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { KarpenterCache } from "../karpenter/KarpenterCache.ts"
import type { LogCaptureHook } from "../repair/LogCaptureHook.ts"
import type { BlockedNodes } from "./BlockedNodes.ts"
import type { DrainPool } from "./DrainPool.ts"
import type { EventRecorder } from "./EventRecorder.ts"
import type { NodeCache } from "./NodeCache.ts"
import type { RepairStore } from "./RepairStore.ts"
import type { TaintFirst } from "./TaintFirst.ts"
import type { WorkQueue } from "./WorkQueue.ts"

export interface ControllerEnv {
  readonly config: ControllerConfig
  readonly kube: KubeShape
  readonly cloud: CloudProvider["Service"]
  readonly logCapture: LogCaptureHook["Service"]
  readonly cache: NodeCache
  /** NodeClaims and NodePools, when Karpenter is installed. */
  readonly karpenter: KarpenterCache
  readonly store: RepairStore
  readonly events: EventRecorder
  readonly queue: WorkQueue
  /** Bounds the drains in flight; taints do not wait for it. */
  readonly drains: DrainPool
  /** Drains wait while taints are written (and briefly after). */
  readonly taintFirst: TaintFirst
  readonly shifts: Ref.Ref<ShiftObservation>
  /** Nodes the breaker holds back, woken when their pool's count drops. */
  readonly blocked: BlockedNodes
  /** Writes the breaker/pool gauges of the pools whose counts moved (so a scrape right after an Event agrees). */
  readonly flushPoolMetrics: () => void
  /** Toleration expiry of repairs this process started, for the decision-latency metric. */
  readonly expiredAt: Map<string, number>
  /** Per-repair eviction backoff attempt. */
  readonly backoff: Map<string, number>
  /** Repairs whose replacement this process has asked for (re-asked after a restart). */
  readonly launched: Set<string>
}
