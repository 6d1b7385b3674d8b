/**
 * What a repair step may use: the ports `actions/` needs, declared here so that actions never import the
 * controller. `controller/ControllerEnv.ts` extends it with what only the controller uses (journal, queue, drain
 * slots, breaker wake-ups); the controller assembles one and hands it to `executeStep`.
 */
import type { Ref } from "effect"
import type { Node } from "@nodemend/kube-access"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { ShiftObservation } from "../decide/zonalShiftGate.ts"
import type { KarpenterCache } from "../karpenter/KarpenterCache.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { LogCaptureHook } from "../repair/LogCaptureHook.ts"
import type { TaintFirst } from "./TaintFirst.ts"

/** The informer's Nodes as a step reads them (the controller's NodeCache). */
export interface CachedNodes {
  readonly get: (name: string) => Node | undefined
  readonly names: () => ReadonlyArray<string>
}

export interface ActionEnv {
  readonly config: ControllerConfig
  readonly kube: KubeShape
  readonly cloud: CloudProvider["Service"]
  readonly logCapture: LogCaptureHook["Service"]
  readonly cache: CachedNodes
  /** NodeClaims and NodePools, when Karpenter is installed. */
  readonly karpenter: KarpenterCache
  readonly events: EventRecorder
  /** Drains wait while taints are written (and briefly after). */
  readonly taintFirst: TaintFirst
  readonly shifts: Ref.Ref<ShiftObservation>
  /** Toleration expiry of repairs this process started, for the decision-latency metric. */
  readonly expiredAt: Map<string, number>
  /** Per-repair eviction backoff attempt. */
  readonly backoff: Map<string, number>
  /** Repairs whose replacement this process has asked for (re-asked after a restart). */
  readonly launched: Set<string>
}
