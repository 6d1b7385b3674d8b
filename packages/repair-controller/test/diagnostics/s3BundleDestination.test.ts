import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Result } from "effect"
// The agent's own allowlist: the URL the controller puts in the NodeDiagnostic must pass it (test-only import).
import { decideDestination } from "../../../agent/src/diagnostics/DestinationPolicy.ts"
import { logCaptureNote } from "../../src/actions/captureLogs.ts"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import { missingDestinationWarning, s3Settings } from "../../src/diagnostics/logCaptureConfig.ts"
import { resolveDestination } from "../../src/diagnostics/logCaptureHookLayer.ts"
import { logCaptureLayer } from "../../src/diagnostics/logCaptureLayer.ts"
import { Kube } from "../../src/kube/Kube.ts"
import {
  bundleObjectKey,
  makeBundlePutPresigner,
  parseS3Destination
} from "../../src/diagnostics/S3BundleDestination.ts"
import type { LogCaptureRequest } from "../../src/repair/LogCaptureHook.ts"
import { advance } from "../../src/repair/stateMachine.ts"
import { startedKwokRepair } from "../fixtures.ts"

const credentials = async () => ({ accessKeyId: "AKIDS3TEST", secretAccessKey: "s3-test-secret" })
const req: LogCaptureRequest = {
  nodeName: "ip-10-0-1-23.us-west-2.compute.internal",
  repairId: "r-0a1b2c",
  conditionType: "AcceleratedHardwareReady",
  reason: "NvidiaXID79Error",
  timeoutMs: 120_000
}

describe("s3:// log-capture destinations", () => {
  it("parses s3://bucket[/prefix] and nothing else", () => {
    expect(parseS3Destination("s3://diag-bucket/nodemend/gpu/")).toEqual({
      bucket: "diag-bucket",
      prefix: "nodemend/gpu"
    })
    expect(parseS3Destination("s3://diag-bucket")).toEqual({ bucket: "diag-bucket", prefix: "" })
    for (const bad of ["s3://Diag_Bucket/x", "https://diag-bucket/x", "s3://a..b/x", "s3://ab"])
      expect(parseS3Destination(bad)).toBeUndefined()
  })

  it("keys a bundle by prefix, node, time and repair id", () => {
    const at = Date.parse("2026-12-06T12:28:53.123Z")
    expect(bundleObjectKey({ bucket: "b", prefix: "nodemend" }, "node-a", "r-1", at)).toBe(
      "nodemend/node-a/20261206T122853Z-r-1-logs.tar.gz"
    )
    expect(bundleObjectKey({ bucket: "b", prefix: "" }, "node-a", "r-1", at)).toBe(
      "node-a/20261206T122853Z-r-1-logs.tar.gz"
    )
  })

  it.effect("presigns one PUT per repair, valid for the capture's timeout, and names the object", () =>
    Effect.gen(function* () {
      const presigner = makeBundlePutPresigner({ region: "us-west-2", credentials })
      const d = yield* resolveDestination({ destination: "s3://diag-bucket/nodemend", presigner }, req)
      presigner.close()
      const url = new URL(d.url)
      expect(url.protocol).toBe("https:")
      expect(url.hostname).toBe("diag-bucket.s3.us-west-2.amazonaws.com")
      const key = decodeURIComponent(url.pathname.slice(1))
      expect(key).toMatch(new RegExp(`^nodemend/${req.nodeName}/\\d{8}T\\d{6}Z-r-0a1b2c-logs\\.tar\\.gz$`))
      expect(d.object).toBe(`s3://diag-bucket/${key}`)
      const q = url.searchParams
      expect(q.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256")
      expect(q.get("X-Amz-Credential")).toMatch(/^AKIDS3TEST\/\d{8}\/us-west-2\/s3\/aws4_request$/)
      expect(q.get("X-Amz-Expires")).toBe("120")
      expect(q.get("X-Amz-SignedHeaders")).toBe("host")
      expect(q.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/)
      // A checksum signed into the URL would be that of an empty body: S3 would refuse the real bundle.
      expect([...q.keys()].filter((k) => /checksum/i.test(k))).toEqual([])
      // The node's agent uploads it when its allowlist names the bucket and folder, and only then.
      expect(decideDestination(d.url, ["s3://diag-bucket/nodemend/"])._tag).toBe("Allowed")
      expect(decideDestination(d.url, ["s3://diag-bucket/other/"])._tag).toBe("Refused")
    })
  )

  it.effect("addresses the endpoint override path-style (the fake cloud, a VPC endpoint)", () =>
    Effect.gen(function* () {
      const presigner = makeBundlePutPresigner({
        region: "us-west-2",
        endpoint: "http://127.0.0.1:4566",
        credentials
      })
      const d = yield* resolveDestination(
        { destination: "s3://diag-bucket/nodemend", presigner },
        { ...req, timeoutMs: 2_500 }
      )
      presigner.close()
      const url = new URL(d.url)
      expect(`${url.origin}${url.pathname}`).toMatch(/^http:\/\/127\.0\.0\.1:4566\/diag-bucket\/nodemend\//)
      expect(url.searchParams.get("X-Amz-Expires")).toBe("3")
    })
  )

  it.effect("fills a URL template as before, with no object named", () =>
    Effect.gen(function* () {
      const d = yield* resolveDestination(
        { destination: "https://uploads.example.com/nodemend/{repairId}/{node}.tar.gz" },
        req
      )
      expect(d).toEqual({ url: `https://uploads.example.com/nodemend/r-0a1b2c/${req.nodeName}.tar.gz` })
    })
  )

  it("the LogCapture Event names the object", () => {
    expect(
      logCaptureNote({
        outcome: "captured",
        object: "s3://b/k.tar.gz",
        bundle: { sha256: "ab".repeat(32), size: 10 }
      })
    ).toBe(
      `pre-termination log capture: captured to s3://b/k.tar.gz (bundle sha256 ${"ab".repeat(32)}, 10 bytes)`
    )
  })
})

describe("the repair record", () => {
  it("names the object a captured bundle went to, and only then", () => {
    const capturing = { ...startedKwokRepair(0), phase: "CapturingLogs" as const }
    const object = "s3://b/nodemend/n1/20261206T122853Z-r1-logs.tar.gz"
    const done = advance(capturing, { _tag: "LogCaptureFinished", outcome: "captured", object }, 1)
    expect(done).toMatchObject({ phase: "Terminating", logsCaptured: "captured", logBundle: object })
    const timedOut = advance(capturing, { _tag: "LogCaptureFinished", outcome: "timed-out" }, 1)
    expect(timedOut.logBundle).toBeUndefined()
  })
})

describe("log-capture config at start", () => {
  it("warns when a policy asks for capture and no destination is set (the default)", () => {
    const c = Result.getOrThrow(decodeConfig({}))
    expect(missingDestinationWarning(c)).toBe(
      "captureLogs is set for AcceleratedHardwareReady=False but logCapture.destination is not: pre-termination log capture is skipped (set it to s3://<bucket>/<prefix>; docs/diagnostics.md)"
    )
    const byReason = Result.getOrThrow(
      decodeConfig({
        policies: [{ conditionType: "AcceleratedHardwareReady", status: "False", captureLogs: false }],
        reasons: { NvidiaXID79Error: { captureLogs: true } }
      })
    )
    expect(missingDestinationWarning(byReason)).toContain("captureLogs is set for reasons.NvidiaXID79Error")
  })

  it("is silent when a destination is set or nothing asks for capture", () => {
    expect(
      missingDestinationWarning(Result.getOrThrow(decodeConfig({ logCapture: { destination: "s3://b/p" } })))
    ).toBeUndefined()
    expect(
      missingDestinationWarning(
        Result.getOrThrow(
          decodeConfig({
            policies: [{ conditionType: "AcceleratedHardwareReady", status: "False", captureLogs: false }]
          })
        )
      )
    ).toBeUndefined()
  })

  it("takes the S3 region from aws.region, else the environment, and the endpoint from aws.endpoints.s3", () => {
    const c = Result.getOrThrow(
      decodeConfig({ aws: { region: "eu-west-1", endpoints: { s3: "http://127.0.0.1:9000" } } })
    )
    expect(s3Settings(c, { AWS_REGION: "us-east-1" })).toEqual({
      region: "eu-west-1",
      endpoint: "http://127.0.0.1:9000"
    })
    expect(s3Settings(Result.getOrThrow(decodeConfig({})), { AWS_REGION: "us-east-1" })).toEqual({
      region: "us-east-1"
    })
    expect(s3Settings(Result.getOrThrow(decodeConfig({})), {})).toEqual({})
  })
})

describe("the capture layer main.ts builds", () => {
  const build = (raw: Record<string, unknown>, env: Record<string, string> = {}) =>
    Effect.runPromiseExit(
      Effect.scoped(
        Layer.build(
          logCaptureLayer(Result.getOrThrow(decodeConfig(raw)), env).pipe(
            Layer.provide(Layer.succeed(Kube, {} as Kube["Service"]))
          )
        )
      )
    )
  it("stops the start on an s3:// destination that is no bucket, or with no region", async () => {
    const bad = await build(
      { logCapture: { destination: "s3://Not_A_Bucket/x" } },
      { AWS_REGION: "us-west-2" }
    )
    expect(Exit.isFailure(bad) && String(bad.cause)).toContain(
      "s3://Not_A_Bucket/x is not s3://<bucket>[/<prefix>]"
    )
    const noRegion = await build({ logCapture: { destination: "s3://diag-bucket/x" } })
    expect(Exit.isFailure(noRegion) && String(noRegion.cause)).toContain(
      "needs a region: aws.region or AWS_REGION"
    )
  })
  it("builds with a region, and with no destination at all", async () => {
    expect(
      Exit.isSuccess(
        await build({ logCapture: { destination: "s3://diag-bucket/x" } }, { AWS_REGION: "us-west-2" })
      )
    ).toBe(true)
    expect(Exit.isSuccess(await build({}))).toBe(true)
  })
})
