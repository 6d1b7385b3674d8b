/**
 * A DCGM policy violation, decoded from dcgmPolicyCallbackResponse_v2 while DCGM's thread waits in the
 * callback (the response memory is freed when the callback returns, so nothing may keep the pointer).
 */
import koffi, { type TypeObject } from "koffi"
import { DBE_LOCATIONS, PolicyCondition } from "./constants.ts"
import {
  PolicyCallbackResponse,
  PolicyConditionDbe,
  PolicyConditionMpr,
  PolicyConditionNvlink,
  PolicyConditionPci,
  PolicyConditionPower,
  PolicyConditionThermal,
  PolicyConditionXid,
  StructVersion
} from "./layouts.ts"

interface Common {
  readonly gpuId: number
  /** Microseconds since the epoch (the field sample DCGM evaluated). */
  readonly timestampUs: number
}

export type PolicyViolation =
  | (Common & { readonly _tag: "DoubleBitEcc"; readonly location: string; readonly errors: number })
  | (Common & { readonly _tag: "PcieReplay"; readonly counter: number })
  | (Common & { readonly _tag: "RetiredPages"; readonly sbePages: number; readonly dbePages: number })
  | (Common & { readonly _tag: "Thermal"; readonly temperatureC: number })
  | (Common & { readonly _tag: "Power"; readonly watts: number })
  | (Common & { readonly _tag: "NvLink"; readonly fieldId: number; readonly counter: number })
  | (Common & { readonly _tag: "Xid"; readonly xid: number })

/** What a callback could not decode: kept so the caller can log it instead of losing it. */
export interface UndecodableViolation {
  readonly _tag: "Undecodable"
  readonly detail: string
}

const VAL_OFFSET = koffi.offsetof(PolicyCallbackResponse, "val")

const num = (v: unknown): number =>
  typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : Number.NaN

interface Header {
  readonly version: number
  readonly condition: number
  readonly gpuId: number
}

/** Decodes the response at `ptr` (a BigInt pointer or a Buffer holding the 32 bytes). */
export const decodePolicyResponse = (ptr: unknown): PolicyViolation | UndecodableViolation => {
  if (ptr === null || ptr === undefined) return { _tag: "Undecodable", detail: "NULL response" }
  const header = koffi.decode(ptr, PolicyCallbackResponse) as Header
  if (header.version !== StructVersion.policyCallbackResponse)
    return {
      _tag: "Undecodable",
      detail: `response version 0x${header.version.toString(16)}, expected 0x${StructVersion.policyCallbackResponse.toString(16)}`
    }
  const gpuId = header.gpuId
  const at = <T>(type: TypeObject): T & { timestamp: unknown } =>
    koffi.decode(ptr, VAL_OFFSET, type) as T & { timestamp: unknown }
  switch (header.condition) {
    case PolicyCondition.DBE: {
      const v = at<{ location: number; numerrors: number }>(PolicyConditionDbe)
      return {
        _tag: "DoubleBitEcc",
        gpuId,
        timestampUs: num(v.timestamp),
        location: DBE_LOCATIONS[v.location] ?? "N/A",
        errors: v.numerrors
      }
    }
    case PolicyCondition.PCI: {
      const v = at<{ counter: number }>(PolicyConditionPci)
      return { _tag: "PcieReplay", gpuId, timestampUs: num(v.timestamp), counter: v.counter }
    }
    case PolicyCondition.MAX_PAGES_RETIRED: {
      const v = at<{ sbepages: number; dbepages: number }>(PolicyConditionMpr)
      return {
        _tag: "RetiredPages",
        gpuId,
        timestampUs: num(v.timestamp),
        sbePages: v.sbepages,
        dbePages: v.dbepages
      }
    }
    case PolicyCondition.THERMAL: {
      const v = at<{ thermalViolation: number }>(PolicyConditionThermal)
      return { _tag: "Thermal", gpuId, timestampUs: num(v.timestamp), temperatureC: v.thermalViolation }
    }
    case PolicyCondition.POWER: {
      const v = at<{ powerViolation: number }>(PolicyConditionPower)
      return { _tag: "Power", gpuId, timestampUs: num(v.timestamp), watts: v.powerViolation }
    }
    case PolicyCondition.NVLINK: {
      const v = at<{ fieldId: number; counter: number }>(PolicyConditionNvlink)
      return { _tag: "NvLink", gpuId, timestampUs: num(v.timestamp), fieldId: v.fieldId, counter: v.counter }
    }
    case PolicyCondition.XID: {
      const v = at<{ errnum: number }>(PolicyConditionXid)
      return { _tag: "Xid", gpuId, timestampUs: num(v.timestamp), xid: v.errnum }
    }
    default:
      return {
        _tag: "Undecodable",
        detail: `condition 0x${header.condition.toString(16)} is not a single known bit`
      }
  }
}
