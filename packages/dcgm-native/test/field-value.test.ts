import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { DCGM_FP64_BLANK, DCGM_INT64_BLANK } from "../src/constants.ts"
import { decodeDouble, decodeInt64, decodeString, toBigInt } from "../src/field-value.ts"

describe("int64 values", () => {
  it("decodes the four sentinels as BigInt comparisons (they do not fit a JS number)", () => {
    expect(decodeInt64(0x7ffffffffffffff0n)).toEqual({ _tag: "Blank", kind: "Blank" })
    expect(decodeInt64(0x7ffffffffffffff1n)).toEqual({ _tag: "Blank", kind: "NotFound" })
    expect(decodeInt64(9223372036854775794n)).toEqual({ _tag: "Blank", kind: "NotSupported" })
    expect(decodeInt64(0x7ffffffffffffff3n)).toEqual({ _tag: "Blank", kind: "NotPermissioned" })
  })
  it("keeps small values that koffi returns as numbers (0x1AA -> 426)", () => {
    expect(decodeInt64(426)).toEqual({ _tag: "Int", value: 426n })
    expect(decodeInt64(0)).toEqual({ _tag: "Int", value: 0n })
  })
  it("never mistakes a value below BLANK for a sentinel, whatever its JS representation", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: DCGM_INT64_BLANK - 1n }), (v) => {
        const asKoffi = v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v
        expect(decodeInt64(asKoffi)).toEqual({ _tag: "Int", value: v })
      })
    )
  })
  it("rejects non-integers", () => {
    expect(() => toBigInt(1.5)).toThrow(TypeError)
    expect(() => toBigInt("1")).toThrow(TypeError)
  })
})

describe("double and string values", () => {
  it("decodes double sentinels from 2^47", () => {
    expect(decodeDouble(DCGM_FP64_BLANK + 2)).toEqual({ _tag: "Blank", kind: "NotSupported" })
    expect(decodeDouble(210.5)).toEqual({ _tag: "Double", value: 210.5 })
  })
  it("decodes string sentinels", () => {
    expect(decodeString("<<<NOT_SUPPORTED>>>")).toEqual({ _tag: "Blank", kind: "NotSupported" })
    expect(decodeString("<<<NULL>>>")).toEqual({ _tag: "Blank", kind: "Blank" })
    expect(decodeString("00000000:01:00.0")).toEqual({ _tag: "String", value: "00000000:01:00.0" })
  })
})
