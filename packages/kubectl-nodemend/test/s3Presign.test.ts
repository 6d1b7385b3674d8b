import { describe, expect, it } from "vitest"
// The agent's own allowlist: the plugin's S3 URLs must pass it.
import { decideDestination } from "../../agent/src/diagnostics/DestinationPolicy.ts"
import { parseS3Uri, presignBundleUrls, presignS3Url, s3Endpoint } from "../src/s3Presign.ts"

// AWS's documented example of query-string authentication (Amazon S3 API Reference, "Authenticating Requests:
// Using Query Parameters (AWS Signature Version 4)"): GET examplebucket/test.txt, us-east-1, 2013-05-24, 86400 s.
const DOC_CREDENTIALS = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
}

describe("S3 presigned URLs", () => {
  it("reproduces the signature of AWS's documented example", async () => {
    const url = await presignS3Url({
      method: "GET",
      hostname: "examplebucket.s3.amazonaws.com",
      path: "/test.txt",
      region: "us-east-1",
      credentials: DOC_CREDENTIALS,
      expiresInSeconds: 86400,
      signingDate: new Date("2013-05-24T00:00:00Z")
    })
    const q = new URL(url).searchParams
    expect(q.get("X-Amz-Signature")).toBe("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    expect(q.get("X-Amz-SignedHeaders")).toBe("host")
    expect(q.get("X-Amz-Credential")).toBe("AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request")
    expect(q.has("x-amz-content-sha256")).toBe(false)
  })

  it("builds per-node PUT and GET URLs that an agent allowing the bucket accepts", async () => {
    const urls = await presignBundleUrls(
      parseS3Uri("s3://my-logs/nodemend/"),
      "us-west-2",
      DOC_CREDENTIALS,
      "ip-10-0-1-2.ec2.internal",
      900
    )
    const put = new URL(urls.put)
    expect(put.host).toBe("my-logs.s3.us-west-2.amazonaws.com")
    expect(put.pathname).toBe("/nodemend/ip-10-0-1-2.ec2.internal-logs.tar.gz")
    expect(put.searchParams.get("X-Amz-Expires")).toBe("900")
    expect(urls.get).not.toBe(urls.put)
    expect(decideDestination(urls.put, ["s3://my-logs/nodemend/"])._tag).toBe("Allowed")
    const session = await presignBundleUrls(
      parseS3Uri("s3://bkt"),
      "us-west-2",
      { ...DOC_CREDENTIALS, sessionToken: "tok" },
      "n",
      60
    )
    expect(new URL(session.put).searchParams.get("X-Amz-Security-Token")).toBe("tok")
  })

  it("uses path style for dotted buckets and the .cn domain in China", () => {
    expect(s3Endpoint("my.logs", "eu-west-1", "a b/c")).toEqual({
      hostname: "s3.eu-west-1.amazonaws.com",
      path: "/my.logs/a%20b/c"
    })
    expect(s3Endpoint("b", "cn-north-1", "k").hostname).toBe("b.s3.cn-north-1.amazonaws.com.cn")
  })

  it("rejects malformed s3 URIs", () => {
    expect(() => parseS3Uri("https://bucket/x")).toThrow(/expected s3:\/\/bucket/)
    expect(parseS3Uri("s3://bucket")).toEqual({ bucket: "bucket", prefix: "" })
  })
})
