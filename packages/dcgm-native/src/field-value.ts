/**
 * Decoding of dcgmFieldValue records into typed readings. int64 values stay BigInt: the blank sentinels sit
 * just under 2^63 and koffi returns anything above 2^53 as BigInt, so comparisons must be BigInt-aware.
 */
import { DCGM_FP64_BLANK, DCGM_INT64_BLANK, DcgmReturn, FieldType } from "./constants.ts"

export type BlankKind = "Blank" | "NotFound" | "NotSupported" | "NotPermissioned"
const BLANK_KINDS: readonly BlankKind[] = ["Blank", "NotFound", "NotSupported", "NotPermissioned"]

export type FieldValue =
  | { readonly _tag: "Int"; readonly value: bigint }
  | { readonly _tag: "Double"; readonly value: number }
  | { readonly _tag: "String"; readonly value: string }
  | { readonly _tag: "Blank"; readonly kind: BlankKind }

/** One sample of one field of one entity. `status` is the per-value dcgmReturn_t (0 = OK). */
export interface FieldReading {
  readonly entityGroupId: number
  readonly entityId: number
  readonly fieldId: number
  readonly status: number
  /** Microseconds since the epoch, as DCGM reports it. */
  readonly timestampUs: number
  readonly value: FieldValue
}

/** Anything koffi may hand back for an int64: number when it fits 2^53, BigInt otherwise. */
export const toBigInt = (v: unknown): bigint => {
  if (typeof v === "bigint") return v
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v)
  throw new TypeError(`expected an integer, got ${typeof v}`)
}

export const decodeInt64 = (raw: unknown): FieldValue => {
  const v = toBigInt(raw)
  if (v >= DCGM_INT64_BLANK) {
    const offset = Number(v - DCGM_INT64_BLANK)
    return { _tag: "Blank", kind: BLANK_KINDS[offset] ?? "Blank" }
  }
  return { _tag: "Int", value: v }
}

export const decodeDouble = (v: number): FieldValue => {
  if (v >= DCGM_FP64_BLANK) {
    const offset = Math.round(v - DCGM_FP64_BLANK)
    return { _tag: "Blank", kind: BLANK_KINDS[offset] ?? "Blank" }
  }
  return { _tag: "Double", value: v }
}

export const decodeString = (s: string): FieldValue => {
  if (s.startsWith("<<<") && s.includes(">>>")) {
    const kind: BlankKind =
      s === "<<<NOT_FOUND>>>"
        ? "NotFound"
        : s === "<<<NOT_SUPPORTED>>>"
          ? "NotSupported"
          : s === "<<<NOT_PERM>>>"
            ? "NotPermissioned"
            : "Blank"
    return { _tag: "Blank", kind }
  }
  return { _tag: "String", value: s }
}

/** The value of a reading as a number when it is an ordinary integer, else undefined. */
export const intValue = (r: FieldReading): number | undefined =>
  r.status === DcgmReturn.OK && r.value._tag === "Int" ? Number(r.value.value) : undefined

export const decodeFieldValue = (
  fieldType: number,
  readI64: () => unknown,
  readDouble: () => number,
  readString: () => string
): FieldValue => {
  switch (fieldType) {
    case FieldType.INT64:
    case FieldType.TIMESTAMP:
      return decodeInt64(readI64())
    case FieldType.DOUBLE:
      return decodeDouble(readDouble())
    case FieldType.STRING:
      return decodeString(readString())
    default:
      return { _tag: "Blank", kind: "Blank" }
  }
}
