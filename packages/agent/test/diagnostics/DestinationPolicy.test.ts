import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigText } from "../../src/config/load.ts"
import {
  classifyHost,
  DEFAULT_DESTINATION_ALLOWLIST,
  decideDestination,
  describeUrl,
  parseAllowedDestination,
  s3Location
} from "../../src/diagnostics/DestinationPolicy.ts"

/** What an operator would configure: the organisation's bucket, an upload service, a MinIO on its own port. */
const ALLOW = [
  "s3://corp-diag/nodemend/",
  "https://uploads.example.com/nodemend/",
  "https://minio.corp.internal:9000/diag"
]

const refusal = (url: string, allowlist: ReadonlyArray<string> = ALLOW): string => {
  const d = decideDestination(url, allowlist)
  if (d._tag !== "Refused") throw new Error(`expected ${url} to be refused, got ${d._tag}`)
  return d.reason
}
const allowed = (url: string, allowlist: ReadonlyArray<string> = ALLOW) =>
  decideDestination(url, allowlist)._tag === "Allowed"

describe("the default allowlist", () => {
  it("allows only node", () => {
    expect(DEFAULT_DESTINATION_ALLOWLIST).toEqual([])
    expect(decideDestination("node", DEFAULT_DESTINATION_ALLOWLIST)).toEqual({
      _tag: "Allowed",
      destination: { _tag: "Node" }
    })
  })

  it.each([
    "https://attacker-bucket.s3.amazonaws.com/loot.tar.gz?X-Amz-Signature=abc",
    "https://attacker-bucket.s3.us-west-2.amazonaws.com/loot.tar.gz",
    "https://s3.eu-central-1.amazonaws.com/attacker-bucket/loot.tar.gz",
    "https://attacker-bucket.s3.cn-north-1.amazonaws.com.cn/loot"
  ])("refuses any S3 bucket, even a well-formed presigned one: %s", (url) => {
    expect(refusal(url, DEFAULT_DESTINATION_ALLOWLIST)).toMatch(
      /not in the agent's allowlist \(diagnostics\.destinationAllowlist is empty: only "node" is allowed\)/
    )
  })

  it("refuses an S3 host on another port", () => {
    expect(refusal("https://bucket.s3.amazonaws.com:8443/k", DEFAULT_DESTINATION_ALLOWLIST)).toMatch(
      /not in the agent's allowlist/
    )
  })
})

describe("S3 bucket entries", () => {
  it.each([
    "https://corp-diag.s3.amazonaws.com/nodemend/n1-logs.tar.gz?X-Amz-Signature=abc",
    "https://corp-diag.s3.us-west-2.amazonaws.com/nodemend/n1.tar.gz",
    "https://corp-diag.s3-us-west-2.amazonaws.com/nodemend/n1.tar.gz",
    "https://corp-diag.s3.dualstack.eu-central-1.amazonaws.com/nodemend/n1.tar.gz",
    "https://corp-diag.s3-fips.us-east-1.amazonaws.com/nodemend/n1.tar.gz",
    "https://corp-diag.s3-accelerate.amazonaws.com/nodemend/n1.tar.gz",
    "https://s3.us-west-2.amazonaws.com/corp-diag/nodemend/n1.tar.gz",
    "https://s3.amazonaws.com/corp-diag/nodemend/deep/er/n1.tar.gz",
    "https://CORP-DIAG.S3.AMAZONAWS.COM./nodemend/n1.tar.gz",
    "https://corp-diag.s3.amazonaws.com:443/nodemend/n1.tar.gz"
  ])("allow the bucket's folder in every commercial endpoint form: %s", (url) => {
    expect(allowed(url)).toBe(true)
  })

  it("allow a dotted bucket path-style, the form kubectl nodemend --s3 presigns", () => {
    expect(
      allowed("https://s3.eu-west-1.amazonaws.com/my.logs/nodemend/n1-logs.tar.gz", ["s3://my.logs/nodemend"])
    ).toBe(true)
  })

  it.each([
    ["https://attacker.s3.amazonaws.com/nodemend/x", /bucket attacker is not in the agent's allowlist/],
    [
      "https://s3.us-west-2.amazonaws.com/attacker/nodemend/x",
      /bucket attacker is not in the agent's allowlist/
    ],
    ["https://evil.corp-diag.s3.amazonaws.com/nodemend/x", /bucket evil\.corp-diag is not in/],
    ["https://corp-diag.s3.amazonaws.com/other/x", /not under a prefix/],
    ["https://corp-diag.s3.amazonaws.com/nodemend-evil/x", /not under a prefix/],
    ["https://corp-diag.s3.amazonaws.com/nodemend/../other/x", /not under a prefix/],
    ["https://corp-diag.s3.amazonaws.com/nodemend/%2e%2e/other/x", /not under a prefix/],
    ["https://corp-diag.s3.amazonaws.com/nodemend/..%2fother", /encoded slashes/],
    ["https://corp-diag.s3.amazonaws.com/nodemend%2F..%2F..%2Fother", /encoded slashes/],
    ["https://corp-diag.s3.amazonaws.com:8443/nodemend/x", /port 8443 is not allowed/],
    ["https://corp-diag.s3.amazonaws.com:80/nodemend/x", /port 80 is not allowed/],
    ["http://corp-diag.s3.amazonaws.com/nodemend/x", /must be https \(got http\)/],
    // Other partitions have their own bucket namespaces: the same name there may be someone else's.
    ["https://corp-diag.s3.us-gov-west-1.amazonaws.com/nodemend/x", /not in the agent's allowlist/],
    ["https://corp-diag.s3.cn-north-1.amazonaws.com.cn/nodemend/x", /not in the agent's allowlist/],
    ["https://corp-diag.s3.amazonaws.com.evil.com/nodemend/x", /not in the agent's allowlist/],
    ["https://evil.com/corp-diag.s3.amazonaws.com/nodemend/x", /not in the agent's allowlist/]
  ])("refuse %s", (url, why) => {
    expect(refusal(url)).toMatch(why)
  })

  it("read the bucket and key the way S3 does", () => {
    expect(s3Location(new URL("https://bkt.s3.us-west-2.amazonaws.com/a%20b/c"))).toEqual({
      bucket: "bkt",
      key: "a b/c"
    })
    expect(s3Location(new URL("https://s3.amazonaws.com/my.b/k"))).toEqual({ bucket: "my.b", key: "k" })
    expect(s3Location(new URL("https://s3.amazonaws.com//k"))).toBeUndefined()
    expect(s3Location(new URL("https://example.com/b/k"))).toBeUndefined()
  })
})

describe("URL prefix entries", () => {
  it("allow the folder, on the named port only", () => {
    expect(allowed("https://uploads.example.com/nodemend/n1.tar.gz")).toBe(true)
    expect(allowed("https://minio.corp.internal:9000/diag/n1.tar.gz")).toBe(true)
    expect(allowed("https://minio.corp.internal:9000/diag")).toBe(true)
    expect(refusal("https://uploads.example.com/nodemendx")).toMatch(/not under a prefix/)
    expect(refusal("https://uploads.example.com/other/nodemend/x")).toMatch(/not under a prefix/)
    expect(refusal("https://uploads.example.com:8443/nodemend/x")).toMatch(/port 8443 is not allowed/)
    expect(refusal("https://minio.corp.internal/diag/x")).toMatch(/port 443 is not allowed/)
    expect(refusal("https://minio.corp.internal:9001/diag/x")).toMatch(/port 9001 is not allowed/)
    expect(refusal("https://minio.corp.internal:9000/diagx")).toMatch(/not under a prefix/)
  })

  it("allow plain http only to a loopback test server named by address and port", () => {
    const local = ["http://127.0.0.1:8080/bucket/"]
    expect(allowed("http://127.0.0.1:8080/bucket/n1.tar.gz", local)).toBe(true)
    expect(refusal("http://127.0.0.1:8081/bucket/n1.tar.gz", local)).toMatch(/port 8081/)
    expect(refusal("http://127.0.0.1:8080/other/n1.tar.gz", local)).toMatch(/not under a prefix/)
    expect(refusal("https://127.0.0.1:8080/bucket/n1.tar.gz", local)).toMatch(/only over plain http/)
    expect(refusal("http://localhost:8080/bucket/n1.tar.gz", local)).toMatch(/not in the agent's allowlist/)
    expect(refusal("http://10.0.0.1:8080/bucket/n1.tar.gz", local)).toMatch(/not in the agent's allowlist/)
  })
})

describe("refusals that hold whatever the allowlist", () => {
  const withLoopback = [...ALLOW, "http://127.0.0.1:8080/bucket/"]

  it.each([
    "https://127.0.0.1/x",
    "https://2130706433/x",
    "https://0x7f000001/x",
    "https://0177.0.0.1/x",
    "https://127.1/x",
    "https://127.0.0.1./x",
    "https://%31%32%37.0.0.1/x",
    "https://１２７.０.０.１/x",
    "https://[::1]/x",
    "https://[0:0:0:0:0:0:0:1]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://localhost/x",
    "https://LOCALHOST./x",
    "https://a.localhost/x",
    "http://127.0.0.2:8080/bucket/x",
    "http://[::ffff:7f00:1]:8080/bucket/x"
  ])("loopback in any notation, unless the allowlist names that very address and port: %s", (url) => {
    expect(refusal(url)).toMatch(/not in the agent's allowlist/)
    expect(decideDestination(url, withLoopback)._tag).toBe("Refused")
  })

  it.each([
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "https://169.254.169.254/latest/api/token",
    "https://2852039166/",
    "https://0xa9fea9fe/",
    "https://0251.0376.0251.0376/",
    "https://169.254.43518/",
    "https://169.254.170.2/v2/credentials",
    "https://169.254.170.23/v1/credentials",
    "https://[::ffff:169.254.169.254]/",
    "https://[::ffff:a9fe:a9fe]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a9fe:a9fe::]/",
    "https://[fd00:ec2::254]/latest/meta-data/",
    "https://[fe80::1]/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://metadata/",
    "https://instance-data.ec2.internal/latest/meta-data/",
    "https://100.100.100.200/latest/meta-data/",
    "https://0.0.0.0/",
    "https://[::]/"
  ])("cloud metadata, link-local and unspecified addresses in any notation: %s", (url) => {
    expect(refusal(url, withLoopback)).toMatch(/link-local or cloud metadata address/)
  })

  it.each([
    ["ftp://corp-diag.s3.amazonaws.com/nodemend/x", /must be https \(got ftp\)/],
    ["file:///etc/shadow", /must be https \(got file\)/],
    ["gopher://corp-diag.s3.amazonaws.com/nodemend/x", /must be https \(got gopher\)/],
    ["ws://uploads.example.com/nodemend/x", /must be https \(got ws\)/],
    ["data:text/plain,x", /must be https \(got data\)/],
    ["not a url", /neither "node" nor a URL/]
  ])("other schemes: %s", (url, why) => {
    expect(refusal(url)).toMatch(why)
  })

  it.each([
    ["https://corp-diag.s3.amazonaws.com@evil.com/nodemend/x", /credentials/],
    ["https://corp-diag.s3.amazonaws.com:443@evil.com/nodemend/x", /credentials/],
    ["https://user:pw@corp-diag.s3.amazonaws.com/nodemend/x", /credentials/],
    ["https://evil.com\\@corp-diag.s3.amazonaws.com/nodemend/x", /host evil\.com is not in/],
    ["https://corp-diag.s3.amazonaws.com#@evil.com/nodemend/x", /not under a prefix/],
    ["https://corp-diag.s3.amazonaws.com%40evil.com/nodemend/x", /neither/]
  ])("userinfo and authority tricks: %s", (url, why) => {
    expect(refusal(url)).toMatch(why)
  })

  it("classifies hosts as the URL parser leaves them", () => {
    expect(classifyHost("127.0.0.1")).toBe("loopback")
    expect(classifyHost("[::ffff:7f00:1]")).toBe("loopback")
    expect(classifyHost("169.254.1.1")).toBe("forbidden")
    expect(classifyHost("fd00:ec2::23")).toBe("forbidden")
    expect(classifyHost("10.0.0.1")).toBe("other")
    expect(classifyHost("[2600:1f18::1]")).toBe("other")
    expect(classifyHost("uploads.example.com")).toBe("other")
  })

  it("describes a URL without its signature", () => {
    expect(describeUrl(new URL("https://b.s3.amazonaws.com/k?X-Amz-Signature=s"))).toBe(
      "https://b.s3.amazonaws.com/k"
    )
  })
})

describe("allowlist entries (config diagnostics.destinationAllowlist)", () => {
  it.each([
    ["s3://corp-diag", { _tag: "S3Bucket", bucket: "corp-diag", keyPrefix: "" }],
    ["s3://corp-diag/nodemend", { _tag: "S3Bucket", bucket: "corp-diag", keyPrefix: "nodemend/" }],
    [
      "https://uploads.example.com",
      { _tag: "UrlPrefix", hostname: "uploads.example.com", port: "443", pathPrefix: "/" }
    ],
    [
      "https://Minio.Corp:9000/d/",
      { _tag: "UrlPrefix", hostname: "minio.corp", port: "9000", pathPrefix: "/d/" }
    ],
    [
      "http://127.0.0.1:8080/b/",
      { _tag: "UrlPrefix", protocol: "http:", hostname: "127.0.0.1", port: "8080" }
    ]
  ])("reads %s", (entry, expected) => {
    const p = parseAllowedDestination(entry)
    expect(p.ok && p.value).toMatchObject(expected)
  })

  it.each([
    ["*.s3.amazonaws.com", /wildcards are not supported/],
    ["s3.*.amazonaws.com", /wildcards are not supported/],
    ["https://*.example.com/", /wildcards are not supported/],
    ["127.0.0.1", /expected "s3:\/\/<bucket>\[\/<prefix>\]" or an https URL prefix/],
    ["my-bucket.s3.amazonaws.com", /expected "s3:\/\/<bucket>/],
    ["s3://UPPER", /is not an S3 bucket name/],
    ["s3://ab", /is not an S3 bucket name/],
    ["s3://b..c", /is not an S3 bucket name/],
    ["s3://192.168.1.1", /is not an S3 bucket name/],
    ["s3://bucket/../x", /"\." or "\.\." segments/],
    ["http://uploads.example.com/", /plain http is allowed only to a loopback address/],
    ["http://localhost:8080/", /name a loopback destination by its IP address/],
    ["https://user:pw@uploads.example.com/", /must not carry credentials/],
    ["https://uploads.example.com/?sig=x", /query or fragment/],
    ["https://uploads.example.com/a%2Fb/", /encoded slashes/],
    ["https://169.254.169.254/", /link-local or cloud metadata address, never a destination/],
    ["https://[fd00:ec2::254]/", /link-local or cloud metadata/],
    ["https://s3.amazonaws.com/", /serves every bucket/],
    ["https://s3.us-west-2.amazonaws.com", /serves every bucket/],
    ["https://s3.cn-north-1.amazonaws.com.cn/", /serves every bucket/],
    ["https://storage.googleapis.com/", /serves every bucket/],
    [" s3://corp-diag", /whitespace/],
    ["ftp://uploads.example.com/", /expected "s3:\/\//]
  ])("refuses %s", (entry, why) => {
    const p = parseAllowedDestination(entry)
    expect(p.ok).toBe(false)
    if (!p.ok) expect(p.error).toMatch(why)
  })

  it("accepts a bucket's own virtual-hosted root and a path-style bucket folder as URL prefixes", () => {
    expect(parseAllowedDestination("https://corp-diag.s3.us-west-2.amazonaws.com/").ok).toBe(true)
    expect(parseAllowedDestination("https://s3.us-west-2.amazonaws.com/corp-diag/").ok).toBe(true)
    expect(
      allowed("https://s3.us-west-2.amazonaws.com/corp-diag/x", [
        "https://s3.us-west-2.amazonaws.com/corp-diag"
      ])
    ).toBe(true)
    expect(
      allowed("https://s3.us-west-2.amazonaws.com/corp-diagx/x", [
        "https://s3.us-west-2.amazonaws.com/corp-diag"
      ])
    ).toBe(false)
  })

  const configError = (yaml: string) => {
    const r = parseConfigText(yaml, "agent.yaml")
    if (Result.isSuccess(r)) throw new Error("expected a ConfigError")
    return r.failure
  }

  it("is empty by default in the agent's config", () => {
    const r = parseConfigText("", "agent.yaml")
    expect(Result.isSuccess(r) && r.success.diagnostics.destinationAllowlist).toEqual([])
  })

  it("decodes valid entries", () => {
    const r = parseConfigText(
      "diagnostics:\n  destinationAllowlist: [s3://corp-diag/nodemend/, 'https://minio.corp.internal:9000/diag/']\n"
    )
    expect(Result.isSuccess(r) && r.success.diagnostics.destinationAllowlist).toEqual([
      "s3://corp-diag/nodemend/",
      "https://minio.corp.internal:9000/diag/"
    ])
  })

  it.each([
    [
      "diagnostics: { destinationAllowlist: ['*.s3.amazonaws.com'] }",
      "diagnostics.destinationAllowlist.0",
      /wildcards/
    ],
    [
      "diagnostics: { destinationAllowlist: ['s3://ok-bucket', '127.0.0.1'] }",
      "diagnostics.destinationAllowlist.1",
      /expected "s3:\/\/<bucket>/
    ],
    [
      "diagnostics: { destinationAllowlist: ['http://169.254.169.254/'] }",
      "diagnostics.destinationAllowlist.0",
      /metadata/
    ],
    ["diagnostics: { destinationAllowlist: s3://corp-diag }", "diagnostics.destinationAllowlist", /array/],
    ["diagnostics: { destinationAllowlist: [''] }", "diagnostics.destinationAllowlist.0", /expected/]
  ])("refuses a bad value naming the field: %s", (yaml, field, why) => {
    const e = configError(yaml)
    expect(e.field).toBe(field)
    expect(e.message).toContain(field)
    expect(e.message).toMatch(why)
  })
})
