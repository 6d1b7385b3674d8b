/**
 * Turns decoded DCGM/NVML signals into Detections / Resolutions with catalog reasons and messages.
 * Pure: inputs carry their own timestamps.
 */
import { resolveReason, xidReason } from "@nodemend/reason-codes"
import { detection, resolution } from "../../checks/finding.ts"
import type { Detection, Resolution } from "../../model.ts"

/** A catalog reason of the nvidia monitor, or a thrown programming error. */
const assertNvidia = (reason: string): string => {
  if (resolveReason(reason)?.entry.monitor !== "nvidia")
    throw new Error(`not an nvidia catalog reason: ${reason}`)
  return reason
}

export const nvidiaDetection = (
  reason: string,
  message: string,
  observedAtMs: number,
  subject?: string
): Detection => detection(assertNvidia(reason), message, observedAtMs, subject)

export const nvidiaResolution = (reason: string, observedAtMs: number, subject?: string): Resolution =>
  resolution(assertNvidia(reason), observedAtMs, subject)

export const xidDetection = (xid: number, observedAtMs: number, subject?: string): Detection => {
  const reason = xidReason(xid)
  const message = reason.endsWith("Error")
    ? `detected XID-${xid} on the instance, review kernel logs for additional information.`
    : `detected unknown XID-${xid} on the instance, review kernel logs for additional information.`
  return nvidiaDetection(reason, message, observedAtMs, subject)
}

/** `NvidiaXID79Error` / `NvidiaXID13Warning` -> 79 / 13; undefined for other reasons. */
export const xidOfReason = (reason: string): number | undefined => {
  const m = /^NvidiaXID(\d+)(?:Error|Warning)$/.exec(reason)
  return m === null ? undefined : Number(m[1])
}
