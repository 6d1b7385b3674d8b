// The fake's S3 against the AWS SDK's own presigner: what a presigned URL of a known key may do, and every
// refusal (unsigned, tampered, expired, unknown key, wrong secret) as S3's XML error.
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import type * as S3Module from "@aws-sdk/client-s3"
import type * as PresignerModule from "@aws-sdk/s3-request-presigner"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeCloud, startFakeCloud } from "../src/FakeCloudServer.ts"
import { isS3ObjectRequest } from "../src/s3/S3Routes.ts"

const require = createRequire(import.meta.url)
const { S3Client, PutObjectCommand, GetObjectCommand } = require("@aws-sdk/client-s3") as typeof S3Module
const { getSignedUrl } = require("@aws-sdk/s3-request-presigner") as typeof PresignerModule

const KNOWN = { accessKeyId: "AKIDFAKES3", secretAccessKey: "fake-s3-secret" }
let cloud: FakeCloud
const client = (credentials = KNOWN) =>
  new S3Client({
    region: "us-west-2",
    endpoint: cloud.url,
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: "WHEN_REQUIRED"
  })
const presign = (
  method: "PUT" | "GET",
  key: string,
  options: { expiresIn?: number; signingDate?: Date; credentials?: typeof KNOWN } = {}
) => {
  const c = client(options.credentials)
  const command =
    method === "PUT"
      ? new PutObjectCommand({ Bucket: "diag", Key: key })
      : new GetObjectCommand({ Bucket: "diag", Key: key })
  return getSignedUrl(c, command, {
    expiresIn: options.expiresIn ?? 60,
    ...(options.signingDate ? { signingDate: options.signingDate } : {})
  }).finally(() => c.destroy())
}
const put = (url: string, body: Buffer) =>
  fetch(url, { method: "PUT", body, headers: { "content-type": "application/gzip" } })
const errorCode = async (res: Response) => /<Code>([^<]+)<\/Code>/.exec(await res.text())?.[1]

beforeAll(async () => {
  cloud = await startFakeCloud({
    region: "us-west-2",
    s3Credentials: { [KNOWN.accessKeyId]: KNOWN.secretAccessKey }
  })
})
afterAll(async () => {
  await cloud?.close()
})

describe("S3 through presigned URLs", () => {
  it("stores the bytes of a presigned PUT and serves them to a presigned GET", async () => {
    const key = "nodemend/node-a/20261206T122853Z-r-1-logs.tar.gz"
    const body = randomBytes(70_000) // not UTF-8: the body must be kept as bytes
    const res = await put(await presign("PUT", key), body)
    expect(res.status).toBe(200)
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/)
    expect(cloud.objects.get("diag", key)?.body.equals(body)).toBe(true)
    const got = await fetch(await presign("GET", key))
    expect(got.status).toBe(200)
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true)
    expect(cloud.objects.list()).toContain(`s3://diag/${key}`)
  })

  it("keeps a key with characters S3 escapes", async () => {
    const key = "nodemend/a b+c=d/é(1).tar.gz"
    expect((await put(await presign("PUT", key), Buffer.from("x"))).status).toBe(200)
    expect(cloud.objects.get("diag", key)?.body.toString()).toBe("x")
  })

  it("refuses an unsigned request: 403 AccessDenied", async () => {
    const res = await put(`${cloud.url}/diag/nodemend/unsigned.tar.gz`, Buffer.from("forged"))
    expect(res.status).toBe(403)
    expect(res.headers.get("content-type")).toBe("application/xml")
    expect(await errorCode(res)).toBe("AccessDenied")
    expect(cloud.objects.get("diag", "nodemend/unsigned.tar.gz")).toBeUndefined()
  })

  it("refuses a tampered URL: another key, a longer expiry, another method", async () => {
    const url = new URL(await presign("PUT", "nodemend/node-a/k.tar.gz"))
    const otherKey = new URL(url)
    otherKey.pathname = "/diag/nodemend/node-b/k.tar.gz"
    const longer = new URL(url)
    longer.searchParams.set("X-Amz-Expires", "604800")
    for (const u of [otherKey, longer]) {
      const res = await put(u.toString(), Buffer.from("forged"))
      expect(res.status).toBe(403)
      expect(await errorCode(res)).toBe("SignatureDoesNotMatch")
    }
    const asGet = await fetch(url)
    expect(asGet.status).toBe(403)
    expect(await errorCode(asGet)).toBe("SignatureDoesNotMatch")
    expect(cloud.objects.get("diag", "nodemend/node-b/k.tar.gz")).toBeUndefined()
  })

  it("refuses an expired URL: 403 AccessDenied, Request has expired", async () => {
    const url = await presign("PUT", "nodemend/late.tar.gz", {
      expiresIn: 60,
      signingDate: new Date(Date.now() - 61_000)
    })
    const res = await put(url, Buffer.from("late"))
    expect(res.status).toBe(403)
    const text = await res.text()
    expect(text).toContain("<Code>AccessDenied</Code>")
    expect(text).toContain("Request has expired")
  })

  it("refuses a key it does not know and a wrong secret", async () => {
    const unknown = await put(
      await presign("PUT", "nodemend/x.tar.gz", { credentials: { ...KNOWN, accessKeyId: "AKIDOTHER" } }),
      Buffer.from("x")
    )
    expect(unknown.status).toBe(403)
    expect(await errorCode(unknown)).toBe("InvalidAccessKeyId")
    const wrong = await put(
      await presign("PUT", "nodemend/x.tar.gz", { credentials: { ...KNOWN, secretAccessKey: "guessed" } }),
      Buffer.from("x")
    )
    expect(wrong.status).toBe(403)
    expect(await errorCode(wrong)).toBe("SignatureDoesNotMatch")
  })

  it("answers NoSuchKey for a signed GET of nothing", async () => {
    const res = await fetch(await presign("GET", "nodemend/none.tar.gz"))
    expect(res.status).toBe(404)
    expect(await errorCode(res)).toBe("NoSuchKey")
  })

  it("leaves the fake's other APIs their paths", () => {
    expect(isS3ObjectRequest("GET", "/admin/instances")).toBe(false)
    expect(isS3ObjectRequest("GET", "/managedresources/arn%3Aaws%3Aeks")).toBe(false)
    expect(isS3ObjectRequest("POST", "/diag/k")).toBe(false)
    expect(isS3ObjectRequest("PUT", "/diag/k")).toBe(true)
  })
})
