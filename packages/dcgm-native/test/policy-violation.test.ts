// Decoding of dcgmPolicyCallbackResponse_v2 from raw bytes laid out as section 2.4 of the reference documents.
import { describe, expect, it } from "vitest"
import { decodePolicyResponse } from "../src/policy-violation.ts"

const response = (opts: {
  version?: number
  condition: number
  gpuId: number
  fill: (b: Buffer) => void
}) => {
  const b = Buffer.alloc(32)
  b.writeUInt32LE(opts.version ?? 0x02000020, 0)
  b.writeUInt32LE(opts.condition, 4)
  b.writeBigInt64LE(1_700_000_000_123_456n, 8) // timestamp, µs since epoch
  opts.fill(b)
  b.writeUInt32LE(opts.gpuId, 24)
  return b
}

describe("policy response decoding", () => {
  it("XID: errnum at 16", () => {
    const b = response({ condition: 0x40, gpuId: 5, fill: (x) => x.writeUInt32LE(79, 16) })
    expect(decodePolicyResponse(b)).toEqual({
      _tag: "Xid",
      gpuId: 5,
      timestampUs: 1_700_000_000_123_456,
      xid: 79
    })
  })
  it("DBE: location 2 = Device, numerrors at 20", () => {
    const b = response({
      condition: 0x1,
      gpuId: 0,
      fill: (x) => {
        x.writeUInt32LE(2, 16)
        x.writeUInt32LE(3, 20)
      }
    })
    expect(decodePolicyResponse(b)).toMatchObject({ _tag: "DoubleBitEcc", location: "Device", errors: 3 })
  })
  it("NVLink: u16 fieldId at 16, 2 bytes padding, counter at 20", () => {
    const b = response({
      condition: 0x20,
      gpuId: 1,
      fill: (x) => {
        x.writeUInt16LE(409, 16)
        x.writeUInt16LE(0xa5a5, 18) // padding must be ignored
        x.writeUInt32LE(7, 20)
      }
    })
    expect(decodePolicyResponse(b)).toMatchObject({ _tag: "NvLink", fieldId: 409, counter: 7 })
  })
  it("an unknown DBE location decodes as N/A", () => {
    const b = response({ condition: 0x1, gpuId: 0, fill: (x) => x.writeUInt32LE(9, 16) })
    expect(decodePolicyResponse(b)).toMatchObject({ location: "N/A" })
  })
  it("a DCGM 3.x response version is refused, not misread", () => {
    const b = response({ version: 0x01000018, condition: 0x40, gpuId: 0, fill: () => {} })
    expect(decodePolicyResponse(b)).toEqual({
      _tag: "Undecodable",
      detail: "response version 0x1000018, expected 0x2000020"
    })
  })
  it("a mask with several bits, or none, is not a violation", () => {
    expect(decodePolicyResponse(response({ condition: 0x41, gpuId: 0, fill: () => {} }))._tag).toBe(
      "Undecodable"
    )
    expect(decodePolicyResponse(response({ condition: 0, gpuId: 0, fill: () => {} }))._tag).toBe(
      "Undecodable"
    )
    expect(decodePolicyResponse(null)).toEqual({ _tag: "Undecodable", detail: "NULL response" })
  })
})
