/**
 * Which condition types the agent writes: one per enabled monitor. AcceleratedHardwareReady only when a
 * GPU monitor actually runs on matching hardware, so that "absent" always means "not watching".
 */
import { CONDITION_TYPE_INFO, NEURON_READY, type ConditionType } from "@nodemend/reason-codes"
import type { AgentConfig } from "../config/schema.ts"
import { DEFAULT_READY_TEXTS, type ReadyTexts } from "./condition-state.ts"

export type Accelerator = "nvidia" | "neuron" | "none"

/** NMA's detection (reference 1.10): the bound kernel driver's name in /proc/bus/pci/devices. */
export const detectAccelerator = (pciDevices: string | undefined): Accelerator =>
  pciDevices?.includes("nvidia") ? "nvidia" : pciDevices?.includes("neuron") ? "neuron" : "none"

export const managedConditionTypes = (
  config: AgentConfig,
  runningAcceleratorMonitor: Exclude<Accelerator, "none"> | undefined
): ReadonlySet<ConditionType> => {
  const out = new Set<ConditionType>()
  for (const info of CONDITION_TYPE_INFO) {
    if (info.type === "AcceleratedHardwareReady") {
      if (runningAcceleratorMonitor !== undefined && config.monitors[runningAcceleratorMonitor].enabled)
        out.add(info.type)
    } else if (info.monitors.some((m) => config.monitors[m].enabled)) out.add(info.type)
  }
  return out
}

export const readyTextsFor = (accelerator: Accelerator): ReadyTexts =>
  accelerator === "neuron"
    ? new Map([
        ...DEFAULT_READY_TEXTS,
        ["AcceleratedHardwareReady", { reason: NEURON_READY.readyReason, message: NEURON_READY.readyMessage }]
      ])
    : DEFAULT_READY_TEXTS
