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
import { ProtobufDecodeError, readFields } from "../../src/cri/protobuf.ts"

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

  it("rejects malformed input with a typed error", () => {
    expect(() => readFields(hex("0a05616263"))).toThrow(ProtobufDecodeError) // length past the end
    expect(() => readFields(hex("08ffffffff"))).toThrow(ProtobufDecodeError) // truncated varint
    expect(() => readFields(hex("0b"))).toThrow(ProtobufDecodeError) // group wire type
    // a varint where the status message belongs (field 1, wire type 0)
    expect(() => decodePodSandboxStatusResponse(hex("0801"))).toThrow(ProtobufDecodeError)
    // an unknown varint field inside the status is skipped
    expect(decodePodSandboxStatusResponse(hex("0a02" + "7801")).status?.id).toBe("")
    expect(() => decodePodSandboxStatusResponse(hex("0a04" + "0a02c328"))).toThrow(ProtobufDecodeError) // bad UTF-8
  })
})
