/**
 * Per-reason config applied to a finding before it reaches the ConditionWriter or EventRecorder:
 * `disabled` drops it, `severity` turns a Condition into an Event or the reverse. The exact reason
 * (`NvidiaXID79Error`) wins over its catalog template (`NvidiaXID{code}Error`).
 */
import { resolveReason } from "@nodemend/reason-codes"
import type { Detection } from "../model.ts"
import type { AgentConfig, ReasonOverride } from "./schema.ts"

export const reasonOverride = (
  config: AgentConfig,
  monitor: string,
  reason: string
): ReasonOverride | undefined => {
  const reasons = (
    config.monitors as Record<string, { reasons: Record<string, ReasonOverride> } | undefined>
  )[monitor]?.reasons
  if (reasons === undefined) return undefined
  const exact = reasons[reason]
  if (exact !== undefined) return exact
  const code = resolveReason(reason)?.entry.code
  return code === undefined ? undefined : reasons[code]
}

export const isMonitorEnabled = (config: AgentConfig, monitor: string): boolean =>
  (config.monitors as Record<string, { enabled: boolean } | undefined>)[monitor]?.enabled ?? false

/** The detection as config wants it, or `undefined` when the reason or its monitor is switched off. */
export const applyOverrides = (config: AgentConfig, detection: Detection): Detection | undefined => {
  if (!isMonitorEnabled(config, detection.monitor)) return undefined
  const o = reasonOverride(config, detection.monitor, detection.reason)
  if (o === undefined) return detection
  if (o.disabled === true) return undefined
  return o.severity === undefined || o.severity === detection.severity
    ? detection
    : { ...detection, severity: o.severity }
}
