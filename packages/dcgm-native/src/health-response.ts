/**
 * Decoding of dcgmHealthResponse_v5 (DCGM 4.x dcgmHealthCheck). The struct is about 1 MB (1024 incident slots);
 * only the header and the first `incidentCount` incidents are decoded.
 */
import koffi from "koffi"
import { DCGM_HEALTH_WATCH_MAX_INCIDENTS, HealthResponseV5, IncidentInfo, StructVersion } from "./layouts.ts"

export type HealthVerdict = "Pass" | "Warn" | "Fail"

export interface HealthIncident {
  /** dcgmHealthSystems_t bit of the system that raised it (PCIe 0x1, NVLink 0x2, memory 0x10, ...). */
  readonly system: number
  readonly health: HealthVerdict
  /** dcgmError_t (dcgm_errors.h). */
  readonly code: number
  readonly message: string
  readonly entityGroupId: number
  readonly entityId: number
}

export interface HealthReport {
  readonly overallHealth: HealthVerdict
  readonly incidents: readonly HealthIncident[]
}

/** dcgmHealthWatchResults_t: PASS 0, WARN 10, FAIL 20; anything else is treated as FAIL (fail closed on garbage). */
export const healthVerdict = (raw: number): HealthVerdict =>
  raw === 0 ? "Pass" : raw === 10 ? "Warn" : "Fail"

export const HEALTH_RESPONSE_SIZE = koffi.sizeof(HealthResponseV5)
const INCIDENTS_OFFSET = koffi.offsetof(HealthResponseV5, "incidents")
const INCIDENT_SIZE = koffi.sizeof(IncidentInfo)

/** A zeroed response buffer with its version set, ready for dcgmHealthCheck. */
export const healthResponseBuffer = (): Buffer => {
  const buf = Buffer.alloc(HEALTH_RESPONSE_SIZE)
  buf.writeUInt32LE(StructVersion.healthResponseV5, 0)
  return buf
}

/** Decodes a filled response; an incidentCount beyond the array is an error, not a read past the buffer. */
export const decodeHealthResponse = (buf: Buffer): HealthReport => {
  if (buf.length < HEALTH_RESPONSE_SIZE) throw new Error(`health response buffer too small: ${buf.length}`)
  const count = buf.readUInt32LE(8)
  if (count > DCGM_HEALTH_WATCH_MAX_INCIDENTS)
    throw new Error(`incidentCount ${count} exceeds ${DCGM_HEALTH_WATCH_MAX_INCIDENTS}`)
  const incidents: HealthIncident[] = []
  for (let i = 0; i < count; i++) {
    const raw = koffi.decode(buf, INCIDENTS_OFFSET + i * INCIDENT_SIZE, IncidentInfo) as {
      system: number
      health: number
      error: { msg: string; code: number }
      entityInfo: { entityGroupId: number; entityId: number }
    }
    incidents.push({
      system: raw.system,
      health: healthVerdict(raw.health),
      code: raw.error.code,
      message: raw.error.msg,
      entityGroupId: raw.entityInfo.entityGroupId,
      entityId: raw.entityInfo.entityId
    })
  }
  return { overallHealth: healthVerdict(buf.readUInt32LE(4)), incidents }
}
