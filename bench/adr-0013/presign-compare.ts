// The plugin's presigned URLs vs @aws-sdk/s3-request-presigner's, same inputs and signing time.
import { S3Client, PutObjectCommand, GetObjectCommand } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { presignS3Url, s3Endpoint } from "../../packages/kubectl-nodemend/src/s3Presign.ts"
import { HttpRequest, sigV4Signer } from "../../packages/repair-controller/src/cloud/aws/sigv4.ts"

const signingDate = new Date("2026-12-02T02:30:00Z")
const base = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
}
const cases: [string, string, string, typeof base & { sessionToken?: string }][] = [
  ["plain", "nodemend-logs", "bundles/ip-10-0-1-5-logs.tar.gz", base],
  ["spaces", "nodemend-logs", "my bundles/node a-logs.tar.gz", base],
  ["unicode", "nodemend-logs", "bündel/日本-logs.tar.gz", base],
  ["tilde and reserved", "nodemend-logs", "a~b/c!d'e(f)*g+h=i&j@k:l,m;n$o-logs.tar.gz", base],
  [
    "session token",
    "nodemend-logs",
    "bundles/n-logs.tar.gz",
    { ...base, sessionToken: "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ+/=" }
  ],
  ["dotted bucket (path style)", "nodemend.logs.example", "bundles/n-logs.tar.gz", base],
  ["china region", "nodemend-logs", "bundles/n-logs.tar.gz", base]
]
const AUTH = new Set([
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token"
])
const region = (what: string) => (what === "china region" ? "cn-north-1" : "us-west-2")
for (const [what, bucket, key, credentials] of cases) {
  const r = region(what)
  const client = new S3Client({
    region: r,
    credentials,
    requestChecksumCalculation: "WHEN_REQUIRED",
    forcePathStyle: bucket.includes(".")
  })
  for (const method of ["PUT", "GET"] as const) {
    const Command = method === "PUT" ? PutObjectCommand : GetObjectCommand
    const sdk = new URL(
      await getSignedUrl(client, new Command({ Bucket: bucket, Key: key }), { expiresIn: 3600, signingDate })
    )
    const { hostname, path } = s3Endpoint(bucket, r, key)
    const ours = new URL(
      await presignS3Url({
        method,
        hostname,
        path,
        region: r,
        credentials,
        expiresInSeconds: 3600,
        signingDate
      })
    )
    // The SDK adds x-id=<Operation> to the query: sign ours with it too, so equal signatures mean equal canonical requests.
    const signer = sigV4Signer({
      service: "s3",
      region: r,
      credentials,
      uriEscapePath: false,
      applyChecksum: false
    })
    const withId = await signer.presign(
      new HttpRequest({
        method,
        protocol: "https:",
        hostname,
        path,
        query: Object.fromEntries([...sdk.searchParams].filter(([k]) => !AUTH.has(k))),
        headers: { host: hostname, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }
      }),
      {
        expiresIn: 3600,
        signingDate,
        unsignableHeaders: new Set(["x-amz-content-sha256"]),
        unhoistableHeaders: new Set(["x-amz-content-sha256"])
      }
    )
    const q = (u: URL) =>
      Object.fromEntries([...u.searchParams].filter(([k]) => AUTH.has(k) && k !== "X-Amz-Signature"))
    const sameHostPath = sdk.host === ours.host && sdk.pathname === ours.pathname
    const sameParams =
      JSON.stringify(Object.entries(q(sdk)).sort()) === JSON.stringify(Object.entries(q(ours)).sort())
    const sameSig = withId.query!["X-Amz-Signature"] === sdk.searchParams.get("X-Amz-Signature")
    const extra = [...sdk.searchParams]
      .filter(([k]) => !AUTH.has(k))
      .map(([k, v]) => `${k}=${v}`)
      .join("&")
    console.log(
      `${what} ${method}: SDK adds ${extra}; ` +
        `host+path ${sameHostPath ? "same" : `DIFFER ${sdk.host}${sdk.pathname} vs ${ours.host}${ours.pathname}`}; params ${sameParams ? "same" : `DIFFER ${JSON.stringify(q(sdk))} vs ${JSON.stringify(q(ours))}`}; signature ${sameSig ? "same" : "DIFFERS"}${what === "tilde and reserved" && method === "PUT" ? `; path ${ours.pathname}` : ""}`
    )
  }
}
