import { describe, expect, it } from "vitest"
import {
  DEFAULT_DESTINATION_ALLOWLIST,
  decideDestination,
  describeUrl,
  hostAllowed
} from "../../src/diagnostics/DestinationPolicy.ts"

const allow = DEFAULT_DESTINATION_ALLOWLIST

describe("decideDestination", () => {
  it("accepts node", () => {
    expect(decideDestination("node", allow)).toEqual({ _tag: "Allowed", destination: { _tag: "Node" } })
  })

  it.each([
    "https://my-bucket.s3.amazonaws.com/key?X-Amz-Signature=abc",
    "https://my.dotted.bucket.s3.us-west-2.amazonaws.com/k",
    "https://s3.eu-central-1.amazonaws.com/bucket/k",
    "https://s3.amazonaws.com/bucket/k",
    "https://bucket.s3-us-west-2.amazonaws.com/k",
    "https://bucket.s3.dualstack.us-east-1.amazonaws.com/k",
    "https://bucket.s3.cn-north-1.amazonaws.com.cn/k",
    "https://BUCKET.S3.AMAZONAWS.COM./k"
  ])("accepts the S3 presigned host %s", (url) => {
    expect(decideDestination(url, allow)._tag).toBe("Allowed")
  })

  it.each([
    ["https://evil.example.com/upload", "not in the agent's allowlist"],
    ["https://s3.amazonaws.com.evil.com/x", "not in the agent's allowlist"],
    ["https://evil.com/s3.amazonaws.com", "not in the agent's allowlist"],
    ["https://bucket.s3.amazonaws.com@evil.com/x", "credentials"],
    ["https://user:pw@bucket.s3.amazonaws.com/x", "credentials"],
    ["http://bucket.s3.amazonaws.com/x", "must be https"],
    ["ftp://bucket.s3.amazonaws.com/x", "must be https"],
    ["file:///etc/shadow", "must be https"],
    ["http://169.254.169.254/latest/meta-data", "must be https"],
    ["not a url", "neither"]
  ])("refuses %s", (url, why) => {
    const d = decideDestination(url, allow)
    expect(d._tag).toBe("Refused")
    if (d._tag === "Refused") expect(d.reason).toContain(why)
  })

  it("allows plain http only to loopback, and only when loopback is allowlisted", () => {
    expect(decideDestination("http://127.0.0.1:8080/x", allow)._tag).toBe("Refused")
    expect(decideDestination("http://127.0.0.1:8080/x", [...allow, "127.0.0.1"])._tag).toBe("Allowed")
    expect(decideDestination("http://10.0.0.1:8080/x", [...allow, "10.0.0.1"])._tag).toBe("Refused")
  })

  it("matches wildcards label-wise", () => {
    expect(hostAllowed("a.b.example.com", ["*.example.com"])).toBe(true)
    expect(hostAllowed("example.com", ["*.example.com"])).toBe(false)
    expect(hostAllowed("s3.x.y.amazonaws.com", ["s3.*.amazonaws.com"])).toBe(false)
  })

  it("describes a URL without its signature", () => {
    expect(describeUrl(new URL("https://b.s3.amazonaws.com/k?X-Amz-Signature=s"))).toBe(
      "https://b.s3.amazonaws.com/k"
    )
  })
})
