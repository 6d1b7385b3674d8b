import type { RepairPolicy } from "./types.ts"

/**
 * Default repair policies, as the Karpenter AWS provider declares them: a node whose condition has held
 * the status for the toleration (from its lastTransitionTime) is unhealthy and may be repaired.
 * DiskPressure, MemoryPressure and PIDPressure are deliberately absent: they are workload-driven.
 */
export const DEFAULT_REPAIR_POLICIES = [
  { conditionType: "Ready", status: "False", tolerationSeconds: 30 * 60 },
  { conditionType: "Ready", status: "Unknown", tolerationSeconds: 30 * 60 },
  { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 10 * 60 },
  { conditionType: "StorageReady", status: "False", tolerationSeconds: 30 * 60 },
  { conditionType: "NetworkingReady", status: "False", tolerationSeconds: 30 * 60 },
  { conditionType: "KernelReady", status: "False", tolerationSeconds: 30 * 60 },
  { conditionType: "ContainerRuntimeReady", status: "False", tolerationSeconds: 30 * 60 }
] as const satisfies readonly RepairPolicy[]

/** Kubelet-owned conditions that must never trigger a repair. */
export const NEVER_REPAIR_CONDITION_TYPES = ["DiskPressure", "MemoryPressure", "PIDPressure"] as const
