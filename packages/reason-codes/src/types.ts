/**
 * The shapes of the catalog. This module has no runtime code and no dependencies:
 * customers import the package root into their own automation.
 */

/** The five condition types the nodemend agent owns. It never writes any other type. */
export const CONDITION_TYPES = [
  "KernelReady",
  "ContainerRuntimeReady",
  "NetworkingReady",
  "StorageReady",
  "AcceleratedHardwareReady"
] as const
export type ConditionType = (typeof CONDITION_TYPES)[number]

/** `Condition` is terminal: it sets its condition False. `Event` is informational: a Warning Event. */
export type Severity = "Condition" | "Event"

/** `auto`: the condition returns to True when the fault clears. `reboot`: only a new boot (or a new node) clears it. */
export type Recovery = "auto" | "reboot"

/** What the repair controller does by default once the toleration has passed. */
export type RepairAction = "Replace" | "Reboot" | "None"

export type MonitorName = "kernel" | "container-runtime" | "networking" | "storage" | "nvidia" | "neuron"

/** A `{name}` placeholder in a code template and what it stands for. */
export interface TemplateParameter {
  readonly name: string
  readonly type: "integer" | "string"
  readonly description: string
}

export interface CatalogEntry {
  /** The exact reason string, or a template such as `NvidiaXID{code}Error`. */
  readonly code: string
  readonly conditionType: ConditionType
  readonly severity: Severity
  readonly monitor: MonitorName
  readonly description: string
  /** What triggers it, in words (source and threshold). */
  readonly trigger: string
  /** The condition/event message, with `{placeholders}`. */
  readonly message: string
  /** The @nodemend/reason-codes version that introduced the entry. */
  readonly since: string
  readonly recovery: Recovery
  readonly defaultAction: RepairAction
  readonly parameters?: readonly TemplateParameter[]
  /** Set when the same code may also be emitted with the other severity, and when. */
  readonly alsoEmittedAs?: { readonly severity: Severity; readonly when: string }
  /** True for a code that the EKS Node Monitoring Agent emits but does not list in its catalog. */
  readonly uncatalogedInNma?: boolean
}

export interface ConditionTypeInfo {
  readonly type: ConditionType
  /** Reason written when the condition is True. */
  readonly readyReason: string
  readonly readyMessage: string
  readonly monitors: readonly MonitorName[]
}

/** Karpenter-style repair policy: a condition held with `status` for `tolerationSeconds` is unhealthy. */
export interface RepairPolicy {
  readonly conditionType: ConditionType | "Ready"
  readonly status: "False" | "Unknown"
  readonly tolerationSeconds: number
}
