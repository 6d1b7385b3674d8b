// Which bundle a repair captured (record, the controller's Events), and its download from S3 with the plugin's
// own SigV4 presigning against the fake cloud, which verifies the signature.
import { createHash, randomBytes } from "node:crypto"
import { mkdtemp, readdir, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ConfigMap, CoreEvent } from "@nodemend/kube-access"
import { type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { serializeRecord } from "@nodemend/repair-controller"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startedKwokRepair } from "../../repair-controller/test/fixtures.ts"
import { downloadUrl } from "../src/download.ts"
import { REPAIR_CONTROLLER } from "../src/fleet.ts"
import { repairBundleOf } from "../src/repairBundle.ts"
import { s3Target } from "../src/repairLogs.ts"
import { presignS3Url, s3ObjectLocation } from "../src/s3Presign.ts"

const sha = "5e".repeat(32)
const KEY = "nodemend/n1/20261206T122853Z-r1-logs.tar.gz"
const event = (reason: string, message: string, at: string, over: Partial<CoreEvent> = {}): CoreEvent => ({
  metadata: { namespace: "default", name: `${reason}-${at}` },
  involvedObject: { kind: "Node", name: "n1" },
  reason,
  message,
  eventTime: at,
  reportingComponent: REPAIR_CONTROLLER,
  ...over
})
const logCapture = (key: string, at: string, over: Partial<CoreEvent> = {}) =>
  event(
    "LogCapture",
    `pre-termination log capture: captured to s3://diag/${key} (bundle sha256 ${sha}, 42 bytes)`,
    at,
    over
  )

describe("the bundle a repair captured", () => {
  it("is the one the controller's LogCapture Event names, with the agent's digest", () => {
    const b = repairBundleOf("n1", undefined, [
      logCapture("nodemend/n1/old.tar.gz", "2026-12-06T10:00:00Z"),
      logCapture(KEY, "2026-12-06T12:30:00Z"),
      event(
        "RepairSucceeded",
        `replaced by n2 (AcceleratedHardwareReady=False, X); logs: s3://diag/${KEY}`,
        "2026-12-06T12:31:00Z"
      )
    ])
    expect(b).toEqual({
      bucket: "diag",
      key: KEY,
      from: "RepairSucceeded",
      digest: { sha256: sha, size: 42 }
    })
  })

  it("ignores Events that are not the repair controller's own", () => {
    const forged = logCapture("evil/n1.tar.gz", "2026-12-06T13:00:00Z", { reportingComponent: "someone" })
    const elsewhere = logCapture("evil/n1.tar.gz", "2026-12-06T13:00:00Z", {
      metadata: { namespace: "kube-system", name: "x" }
    })
    expect(repairBundleOf("n1", undefined, [forged, elsewhere])).toBeUndefined()
    expect(repairBundleOf("n1", undefined, [forged, logCapture(KEY, "2026-12-06T12:30:00Z")])?.key).toBe(KEY)
  })

  it("takes an in-flight repair's record first", () => {
    const record = { ...startedKwokRepair(0), logBundle: "s3://diag/nodemend/n1/now.tar.gz" }
    const journal: ConfigMap = {
      metadata: { name: "nodemend-repair-n1" },
      data: { record: serializeRecord(record) }
    }
    const b = repairBundleOf("n1", journal, [logCapture(KEY, "2026-12-06T12:30:00Z")])
    expect(b).toEqual({ bucket: "diag", key: "nodemend/n1/now.tar.gz", from: "record" })
  })

  it("is nothing when no capture went to an object", () => {
    expect(
      repairBundleOf("n1", undefined, [
        event("LogCapture", "pre-termination log capture: timed-out", "2026-12-06T12:30:00Z")
      ])
    ).toBeUndefined()
  })

  it("takes region and endpoint from the flags, then the SDK's environment variables", () => {
    expect(s3Target({}, { AWS_REGION: "eu-west-1", AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" })).toEqual({
      region: "eu-west-1",
      endpoint: "http://127.0.0.1:9"
    })
    expect(() => s3Target({}, {})).toThrow(/--region/)
  })
})

describe("downloading it from S3 (the fake cloud verifies the signature)", () => {
  const credentials = { accessKeyId: "AKIDOPERATOR", secretAccessKey: "operator-secret" }
  let cloud: FakeCloud
  let dir: string
  beforeAll(async () => {
    cloud = await startFakeCloud({
      region: "us-west-2",
      s3Credentials: { [credentials.accessKeyId]: credentials.secretAccessKey }
    })
    dir = await mkdtemp(join(tmpdir(), "repair-bundle-"))
  })
  afterAll(async () => {
    await cloud?.close()
  })
  const presignGet = (key: string, creds = credentials) =>
    presignS3Url({
      method: "GET",
      ...s3ObjectLocation("diag", key, "us-west-2", cloud.url),
      region: "us-west-2",
      credentials: creds,
      expiresInSeconds: 60
    })

  it("fetches the object with the operator's credentials and keeps it when the digest matches", async () => {
    const body = randomBytes(4096)
    cloud.objects.put("diag", KEY, body)
    const digest = { sha256: createHash("sha256").update(body).digest("hex"), size: body.length }
    const file = join(dir, "n1-logs.tar.gz")
    expect(await downloadUrl(await presignGet(KEY), file, 10_000, { node: "n1", digest })).toEqual(digest)
    expect((await readFile(file)).equals(body)).toBe(true)
  })

  it("is refused by S3 with credentials it does not accept", async () => {
    const url = await presignGet(KEY, { ...credentials, secretAccessKey: "wrong" })
    await expect(
      downloadUrl(url, join(dir, "x.tar.gz"), 10_000, { node: "n1", digest: undefined })
    ).rejects.toThrow(/answered 403[\s\S]*SignatureDoesNotMatch/)
    expect(await readdir(dir)).not.toContain("x.tar.gz")
  })
})
