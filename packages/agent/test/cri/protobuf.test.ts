import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decodePodSandboxStatusRequest,
  decodePodSandboxStatusResponse,
  encodePodSandboxStatusRequest,
  encodePodSandboxStatusResponse,
  type PodSandboxStatus,
  sandboxIps
} from "../../src/cri/pod-sandbox-status.ts"
import { ProtobufDecodeError, ProtoWriter, readFields } from "../../src/cri/protobuf.ts"

// Strings that survive UTF-8 (no lone surrogates), as protobuf strings must.
const text = fc.string({ unit: "grapheme", maxLength: 40 })
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })
const status: fc.Arbitrary<PodSandboxStatus> = fc.record({
  id: text,
  metadata: fc.option(
    fc.record({ name: text, uid: text, namespace: text, attempt: fc.integer({ min: 0, max: 2 ** 32 - 1 }) }),
    { nil: undefined }
  ),
  state: int32,
  createdAt: int64,
  network: fc.option(fc.record({ ip: text, additionalIps: fc.array(text, { maxLength: 4 }) }), {
    nil: undefined
  })
})

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ""), "hex"))

describe("CRI protobuf codec", () => {
  it("round-trips PodSandboxStatusResponse", () => {
    fc.assert(
      fc.property(fc.option(status, { nil: undefined }), (s) => {
        expect(decodePodSandboxStatusResponse(encodePodSandboxStatusResponse({ status: s }))).toEqual({
          status: s
        })
      })
    )
  })

  it("round-trips PodSandboxStatusRequest", () => {
    fc.assert(
      fc.property(text, fc.boolean(), (podSandboxId, verbose) => {
        const r = { podSandboxId, verbose }
        expect(decodePodSandboxStatusRequest(encodePodSandboxStatusRequest(r))).toEqual(r)
      })
    )
  })

  it("encodes the request as the proto definition lays it out", () => {
    // pod_sandbox_id = 1 (tag 0x0a, length 3, "abc"), verbose = 2 (tag 0x10, varint 1)
    expect(
      Buffer.from(encodePodSandboxStatusRequest({ podSandboxId: "abc", verbose: true })).toString("hex")
    ).toBe("0a03616263" + "1001")
    // proto3 defaults are not written
    expect(encodePodSandboxStatusRequest({ podSandboxId: "", verbose: false })).toHaveLength(0)
  })

  it("decodes a response built byte by byte from api.proto, skipping fields it does not read", () => {
    // PodSandboxNetworkStatus { ip = 1: "10.0.1.5"; additional_ips = 2: [PodIP { ip = 1: "2001:db8::5" }] }
    const podIp = "0a0b" + Buffer.from("2001:db8::5").toString("hex")
    const network = "0a08" + Buffer.from("10.0.1.5").toString("hex") + "12" + "0d" + podIp
    // PodSandboxMetadata { name = 1: "web-0"; uid = 2: "u1"; namespace = 3: "default"; attempt = 4: 2 }
    const metadata =
      "0a05" +
      Buffer.from("web-0").toString("hex") +
      "1202" +
      Buffer.from("u1").toString("hex") +
      "1a07" +
      Buffer.from("default").toString("hex") +
      "2002"
    const statusBody =
      "0a02" +
      Buffer.from("s1").toString("hex") + // id = 1
      "12" +
      (metadata.length / 2).toString(16).padStart(2, "0") +
      metadata + // metadata = 2
      "1801" + // state = 3: SANDBOX_NOTREADY
      "20" +
      "e807" + // created_at = 4: 1000
      "2a" +
      (network.length / 2).toString(16).padStart(2, "0") +
      network + // network = 5
      "3a00" + // linux = 6 (empty message, skipped)
      "4a0472756e63" // runtime_handler = 9: "runc" (skipped)
    const info = "1208" + "0a02" + "6b31" + "1202" + "7631" // info = 2: map entry {k1: v1} (skipped)
    const body = "0a" + (statusBody.length / 2).toString(16).padStart(2, "0") + statusBody + info + "2064" // timestamp = 4
    const r = decodePodSandboxStatusResponse(hex(body))
    expect(r.status).toEqual({
      id: "s1",
      metadata: { name: "web-0", uid: "u1", namespace: "default", attempt: 2 },
      state: 1,
      createdAt: 1000n,
      network: { ip: "10.0.1.5", additionalIps: ["2001:db8::5"] }
    })
    expect(sandboxIps(r.status!)).toEqual(["10.0.1.5", "2001:db8::5"])
  })

  it("decodes a negative int64 written as ten bytes", () => {
    const s: PodSandboxStatus = { id: "", metadata: undefined, state: 0, createdAt: -1n, network: undefined }
    const bytes = encodePodSandboxStatusResponse({ status: s })
    expect(Buffer.from(bytes).toString("hex")).toBe("0a0b" + "20" + "ffffffffffffffffff01")
    expect(decodePodSandboxStatusResponse(bytes).status?.createdAt).toBe(-1n)
  })

  it("reads 64-bit varints to their last bit and refuses a tenth byte that overflows 64 bits", () => {
    expect(readFields(hex("08" + "ffffffffffffffffff01"))).toEqual([
      { field: 1, wire: 0, value: 2n ** 64n - 1n }
    ])
    expect(readFields(hex("08" + "8080808080808080 8001"))).toEqual([{ field: 1, wire: 0, value: 2n ** 63n }])
    // non-minimal encodings are legal: 1 written in three bytes
    expect(readFields(hex("08" + "818000"))).toEqual([{ field: 1, wire: 0, value: 1n }])
    expect(() => readFields(hex("08" + "ffffffffffffffffff02"))).toThrow(/overflows 64 bits/)
    expect(() => readFields(hex("08" + "ffffffffffffffffffff01"))).toThrow(ProtobufDecodeError)
  })

  it("skips unknown fields of every wire type, groups (nested) and packed repeated fields included", () => {
    // field 7 fixed64, field 8 fixed32, field 9 group { field 1 varint, field 2 group { field 1 "x" } },
    // field 10 packed repeated int32 [1, 300], then the id (field 1 of PodSandboxStatus) the decoder reads
    const unknown =
      "39" +
      "0102030405060708" +
      "45" +
      "01020304" +
      "4b" +
      "0801" +
      "13" +
      "0a0178" +
      "14" +
      "4c" +
      "5203" +
      "01ac02"
    const statusBody = unknown + "0a02" + Buffer.from("s9").toString("hex")
    const body = "0a" + (statusBody.length / 2).toString(16).padStart(2, "0") + statusBody
    expect(decodePodSandboxStatusResponse(hex(body)).status?.id).toBe("s9")
    expect(readFields(hex(unknown)).map((f) => [f.field, f.wire])).toEqual([
      [7, 1],
      [8, 5],
      [10, 2]
    ])
  })

  it("writes field numbers above 2^28 with their full tag", () => {
    // a tag of field 2^28 + 1 as a JS-number shift would overflow into a negative, ten-byte varint
    const field = 2 ** 28 + 1
    const bytes = new ProtoWriter().int(field, 1).finish()
    expect(readFields(bytes)).toEqual([{ field, wire: 0, value: 1n }])
  })

  it("rejects malformed input with a typed error", () => {
    expect(() => readFields(hex("0a05616263"))).toThrow(ProtobufDecodeError) // length past the end
    expect(() => readFields(hex("08ffffffff"))).toThrow(ProtobufDecodeError) // truncated varint
    expect(() => readFields(hex("0b"))).toThrow(ProtobufDecodeError) // a group without its end tag
    expect(() => readFields(hex("0b" + "14"))).toThrow(/ended by field 2/) // ended by another field's tag
    expect(() => readFields(hex("0c"))).toThrow(ProtobufDecodeError) // a stray end tag
    expect(() => readFields(hex("0e00"))).toThrow(/wire type 6/) // wire types 6 and 7 do not exist
    expect(() => readFields(hex("0b".repeat(100) + "0c".repeat(100)))).toThrow(/nested/)
    expect(() => readFields(hex("0d0102"))).toThrow(ProtobufDecodeError) // truncated fixed32
    expect(() => readFields(hex("00"))).toThrow(/field number 0/)
    // field number 2^29 (one past the largest): tag varint 0x100000000 = 80 80 80 80 10
    expect(() => readFields(hex("8080808010"))).toThrow(/field number/)
    // a varint where the status message belongs (field 1, wire type 0)
    expect(() => decodePodSandboxStatusResponse(hex("0801"))).toThrow(ProtobufDecodeError)
    // an unknown varint field inside the status is skipped
    expect(decodePodSandboxStatusResponse(hex("0a02" + "7801")).status?.id).toBe("")
    expect(() => decodePodSandboxStatusResponse(hex("0a04" + "0a02c328"))).toThrow(ProtobufDecodeError) // bad UTF-8
  })
})
