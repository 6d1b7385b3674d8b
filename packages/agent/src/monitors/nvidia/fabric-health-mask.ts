/**
 * DCGM field 174 / NVML healthMask: packed tri-state sub-fields, decoded per vendor spec
 * (shared/reference/dcgm-nvml.md 3.7). 0 in a sub-field means "not supported", never a fault; a fully
 * healthy GPU on R580+ reads 0x1AA, so the mask is never tested against 0.
 */

export interface FabricSubField {
  readonly name: string
  readonly shift: number
  readonly width: number
  /** Whether a raw sub-field value is a fault (DCGM 4.6 MonitorFabricFields). */
  readonly isFault: (value: number) => boolean
}

/** 0 not supported, 1 TRUE (the bad thing is happening), 2 FALSE. */
const trueIsFault = (v: number) => v === 1

export const FABRIC_SUB_FIELDS: readonly FabricSubField[] = [
  { name: "degraded_bw", shift: 0, width: 0x3, isFault: trueIsFault },
  { name: "route_recovery", shift: 2, width: 0x3, isFault: trueIsFault },
  { name: "route_unhealthy", shift: 4, width: 0x3, isFault: trueIsFault },
  { name: "access_timeout_recovery", shift: 6, width: 0x3, isFault: trueIsFault },
  // 0 not supported, 1 NONE (correct), 2..8 a specific misconfiguration
  { name: "incorrect_configuration", shift: 8, width: 0xf, isFault: (v) => v !== 0 && v !== 1 },
  // informational: whether the GPU is in a partition; never evaluated
  { name: "partition_assigned", shift: 12, width: 0x3, isFault: () => false }
]

export interface DecodedFabricMask {
  readonly mask: number
  readonly fields: readonly { readonly name: string; readonly value: number }[]
  readonly faults: readonly { readonly name: string; readonly value: number }[]
}

export const decodeFabricHealthMask = (mask: number): DecodedFabricMask => {
  const fields = FABRIC_SUB_FIELDS.map((f) => ({ name: f.name, value: (mask >>> f.shift) & f.width }))
  const faults = FABRIC_SUB_FIELDS.flatMap((f, i) => (f.isFault(fields[i]!.value) ? [fields[i]!] : []))
  return { mask, fields, faults }
}

/** The catalog message: `GPU fabric health mask 0x{mask}: {fields}` listing only the faulting sub-fields. */
export const fabricMaskMessage = (d: DecodedFabricMask): string =>
  `GPU fabric health mask 0x${d.mask.toString(16).toUpperCase()}: ${d.faults.map((f) => `${f.name}=${f.value}`).join(", ")}`
