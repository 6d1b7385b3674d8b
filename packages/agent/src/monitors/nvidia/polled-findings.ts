/**
 * The polled path: field readings of the last window (default 5 min) -> findings. Fabric health mask and
 * Fabric Manager status are evaluated on their latest value and clear when healthy again; clock event
 * reasons and NVSwitch SXids become Events for every faulty sample in the window.
 */
import { DcgmReturn, EntityGroup, FieldId, type FieldReading } from "@nodemend/dcgm-native"
import type { Finding } from "../../model.ts"
import { clockEventFailures } from "./clock-event-reasons.ts"
import { decodeFabricHealthMask, fabricMaskMessage } from "./fabric-health-mask.ts"
import { classifyFabricManagerStatus, fabricManagerStatusName } from "./fabric-manager-status.ts"
import { nvidiaDetection, nvidiaResolution } from "./findings.ts"

/** How to name an entity in findings (GPU: PCI address or `gpu{N}`; switch: `nvswitch{N}`). */
export type SubjectOf = (entityGroupId: number, entityId: number) => string

export const defaultSubject: SubjectOf = (group, id) =>
  group === EntityGroup.SWITCH ? `nvswitch${id}` : `gpu${id}`

const okInt = (r: FieldReading): bigint | undefined =>
  r.status === DcgmReturn.OK && r.value._tag === "Int" ? r.value.value : undefined

/** Fabric health mask (174): NvidiaFabricError per GPU while a sub-field faults; a Resolution when healthy. */
export const fabricMaskFindings = (mask: number, atMs: number, subject: string): Finding => {
  const decoded = decodeFabricHealthMask(mask)
  return decoded.faults.length > 0
    ? nvidiaDetection("NvidiaFabricError", fabricMaskMessage(decoded), atMs, subject)
    : nvidiaResolution("NvidiaFabricError", atMs, subject)
}

/** Fabric Manager status (170): 0/3 healthy, 2 warning Event, anything else FabricManagerNotRunning. */
export const fabricManagerFindings = (status: number, atMs: number, subject: string): readonly Finding[] => {
  switch (classifyFabricManagerStatus(status)) {
    case "healthy":
      return [nvidiaResolution("FabricManagerNotRunning", atMs, subject)]
    case "warning":
      return [
        nvidiaResolution("FabricManagerNotRunning", atMs, subject),
        nvidiaDetection(
          `DCGMFieldError${FieldId.FABRIC_MANAGER_STATUS}`,
          `DCGM detected fieldID ${FieldId.FABRIC_MANAGER_STATUS} with statusCode 0: Fabric Manager status ${fabricManagerStatusName(status)}`,
          atMs,
          subject
        )
      ]
    case "fault":
      return [
        nvidiaDetection(
          "FabricManagerNotRunning",
          `Fabric Manager status: ${fabricManagerStatusName(status)}`,
          atMs,
          subject
        )
      ]
  }
}

/** Clock event reasons (112): an Event when a sample carries a failure bit (HW slowdown, thermal, power brake). */
export const clockReasonFinding = (
  mask: bigint,
  status: number,
  atMs: number,
  subject: string
): Finding | undefined => {
  const failures = clockEventFailures(mask)
  if (failures.length === 0) return undefined
  return nvidiaDetection(
    `DCGMFieldError${FieldId.CLOCKS_EVENT_REASONS}`,
    `DCGM detected fieldID ${FieldId.CLOCKS_EVENT_REASONS} with statusCode ${status}: Clocks Event Reasons "${failures.join(",")}" (mask 0x${mask.toString(16)})`,
    atMs,
    subject
  )
}

export interface PolledReadings {
  /** Latest values of 170 and 174 per GPU. */
  readonly latest: readonly FieldReading[]
  /** Every sample of 112, 856, 857 in the window. */
  readonly window: readonly FieldReading[]
}

export const polledFindings = (
  r: PolledReadings,
  atMs: number,
  subjectOf: SubjectOf = defaultSubject
): readonly Finding[] => {
  const out: Finding[] = []
  for (const reading of r.latest) {
    const v = okInt(reading)
    if (v === undefined) continue // blank = not supported / not permissioned / no data: never a fault
    const subject = subjectOf(reading.entityGroupId, reading.entityId)
    if (reading.fieldId === FieldId.FABRIC_HEALTH_MASK) out.push(fabricMaskFindings(Number(v), atMs, subject))
    else if (reading.fieldId === FieldId.FABRIC_MANAGER_STATUS)
      out.push(...fabricManagerFindings(Number(v), atMs, subject))
  }
  // one clock Event per GPU per poll: the union of the failure bits seen in the window
  const clock = new Map<string, { mask: bigint; status: number; atMs: number }>()
  for (const reading of r.window) {
    const v = okInt(reading)
    if (v === undefined) continue
    const subject = subjectOf(reading.entityGroupId, reading.entityId)
    const sampleMs = Math.floor(reading.timestampUs / 1000)
    if (reading.fieldId === FieldId.CLOCKS_EVENT_REASONS) {
      const prev = clock.get(subject)
      clock.set(subject, {
        mask: (prev?.mask ?? 0n) | v,
        status: reading.status,
        atMs: Math.max(prev?.atMs ?? 0, sampleMs)
      })
    } else if (
      reading.fieldId === FieldId.SXID_FATAL_ERROR ||
      reading.fieldId === FieldId.SXID_NON_FATAL_ERROR
    ) {
      const kind =
        reading.fieldId === FieldId.SXID_FATAL_ERROR ? "SXID Fatal Error Code" : "SXID Non-Fatal Error Code"
      out.push(
        nvidiaDetection(
          `DCGMFieldError${reading.fieldId}`,
          `DCGM detected fieldID ${reading.fieldId} with statusCode ${reading.status}: ${kind} ${v}`,
          sampleMs,
          subject
        )
      )
    }
  }
  for (const [subject, c] of clock) {
    const f = clockReasonFinding(c.mask, c.status, c.atMs, subject)
    if (f !== undefined) out.push(f)
  }
  return out
}

/** NVML-only view of the Fabric Manager status, derived as DCGM does (state 3 splits on the training status). */
export const fmStatusFromNvml = (state: number, status: number): number =>
  state === 0 || state === 1 || state === 2 ? state : state === 3 ? (status === 0 ? 3 : 4) : 5
