/** Builds findings whose monitor, condition type and default severity come from the catalog entry. */
import { resolveReason } from "@nodemend/reason-codes"
import type { Detection, Resolution } from "../model.ts"

const entryOf = (reason: string) => {
  const entry = resolveReason(reason)?.entry
  if (entry === undefined) throw new Error(`not a catalog reason: ${reason}`)
  return entry
}

export const detection = (
  reason: string,
  message: string,
  observedAtMs: number,
  subject?: string
): Detection => {
  const e = entryOf(reason)
  return {
    _tag: "Detection",
    monitor: e.monitor,
    reason,
    conditionType: e.conditionType,
    severity: e.severity,
    message,
    observedAtMs,
    ...(subject === undefined ? {} : { subject })
  }
}

export const resolution = (reason: string, observedAtMs: number, subject?: string): Resolution => {
  const e = entryOf(reason)
  return {
    _tag: "Resolution",
    monitor: e.monitor,
    reason,
    conditionType: e.conditionType,
    observedAtMs,
    ...(subject === undefined ? {} : { subject })
  }
}

export const pct = (n: number, d: number): string => ((100 * n) / d).toFixed(1)
