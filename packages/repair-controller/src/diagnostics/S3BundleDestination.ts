/**
 * `logCapture.destination: s3://bucket/prefix`: one presigned PUT per repair, signed with the controller's own
 * credentials (the SDK's default chain) by the SDK's own presigner, so the agent's plain PUT is accepted by a
 * real bucket. The URL is valid only as long as the capture may run (the capture's timeout): a URL that every
 * agent can read in the NodeDiagnostic opens nothing once the repair has moved on.
 *
 * The SDK comes from its CommonJS build, as the provider's clients do (why: cloud/aws/sigv4.ts). This module is
 * loaded only when the destination is an S3 one (program.ts).
 */
import { createRequire } from "node:module"
import type * as S3Module from "@aws-sdk/client-s3"
import type * as PresignerModule from "@aws-sdk/s3-request-presigner"

const require = createRequire(import.meta.url)

export interface S3Prefix {
  readonly bucket: string
  /** "" (the bucket's root) or a folder without leading or trailing slashes. */
  readonly prefix: string
}

const S3_URI = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/

/** `s3://bucket[/prefix]`, or undefined when the destination is not an S3 one. */
export const parseS3Destination = (destination: string): S3Prefix | undefined => {
  const m = S3_URI.exec(destination)
  if (!m || m[1]!.includes("..")) return undefined
  return { bucket: m[1]!, prefix: (m[2] ?? "").replace(/^\/+|\/+$/g, "") }
}

export const isS3Destination = (destination: string): boolean => destination.startsWith("s3://")

/** 2026-12-06T12:28:53.123Z -> 20261206T122853Z: sortable, and nothing in it S3 would escape. */
const compactTime = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "")

/**
 * The bundle's key: `<prefix>/<node>/<time>-<repair id>-logs.tar.gz`. One folder per node, in time order; the
 * repair id tells two captures of the same second apart.
 */
export const bundleObjectKey = (
  location: S3Prefix,
  nodeName: string,
  repairId: string,
  atMs: number
): string =>
  [location.prefix, nodeName, `${compactTime(atMs)}-${repairId}-logs.tar.gz`]
    .filter((s) => s !== "")
    .join("/")

/** How the object is named in the record and the Events (and what `kubectl nodemend logs --repair` reads). */
export const s3ObjectUri = (bucket: string, key: string) => `s3://${bucket}/${key}`

export interface S3PresignerOptions {
  readonly region: string
  /** An endpoint override (the fake cloud, a VPC endpoint): path-style addressing then. */
  readonly endpoint?: string
  /** Default: the SDK's default chain (Pod Identity, IRSA, environment, instance role). */
  readonly credentials?: S3Module.S3ClientConfig["credentials"]
}

export interface BundlePutPresigner {
  /** A presigned PUT URL for `key` in `bucket`, valid for `expiresInSeconds` (whole seconds, at least 1). */
  readonly presignPut: (bucket: string, key: string, expiresInSeconds: number) => Promise<string>
  readonly close: () => void
}

export const makeBundlePutPresigner = (options: S3PresignerOptions): BundlePutPresigner => {
  const { S3Client, PutObjectCommand } = require("@aws-sdk/client-s3") as typeof S3Module
  const { getSignedUrl } = require("@aws-sdk/s3-request-presigner") as typeof PresignerModule
  const client = new S3Client({
    region: options.region,
    // Undefined: the S3 client's own default chain.
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    // Else the SDK signs a checksum of an empty body into the URL, and S3 refuses the agent's real bundle.
    requestChecksumCalculation: "WHEN_REQUIRED"
  })
  return {
    presignPut: (bucket, key, expiresInSeconds) =>
      getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: key }), {
        expiresIn: Math.max(1, Math.ceil(expiresInSeconds))
      }),
    close: () => client.destroy()
  }
}
