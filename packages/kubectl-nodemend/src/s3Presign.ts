/**
 * `--s3 s3://bucket/prefix`: presigned PUT (for the agent) and GET (for the download) URLs for
 * `<prefix>/<node>-logs.tar.gz`, signed with SigV4 query authentication and the caller's AWS credentials,
 * as `kubectl ekslogs --s3` does. Unsigned payload, only `host` signed, as S3's presigned URLs are.
 */
import { type AwsCredentials, HttpRequest, sigV4Signer } from "@nodemend/repair-controller/aws-sigv4"
import { PluginError } from "./errors.ts"

export interface S3Location {
  readonly bucket: string
  readonly prefix: string
}

export const parseS3Uri = (uri: string): S3Location => {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri)
  if (!m) throw new PluginError(`invalid --s3 ${uri} (expected s3://bucket[/prefix])`)
  return { bucket: m[1]!, prefix: (m[2] ?? "").replace(/^\/+|\/+$/g, "") }
}

/** RFC 3986 escaping of each key segment (S3's canonical URI), keeping the slashes. */
const escapeKey = (key: string) =>
  key
    .split("/")
    .map((s) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    )
    .join("/")

/** Host and path of an object: virtual-hosted style, or path style when the bucket name has dots (TLS). */
export const s3Endpoint = (
  bucket: string,
  region: string,
  key: string
): { hostname: string; path: string } => {
  const domain = region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
  return bucket.includes(".")
    ? { hostname: `s3.${region}.${domain}`, path: `/${bucket}/${escapeKey(key)}` }
    : { hostname: `${bucket}.s3.${region}.${domain}`, path: `/${escapeKey(key)}` }
}

/**
 * Where an object is: AWS's endpoint for the region, or an endpoint override (`--endpoint-url`,
 * `AWS_ENDPOINT_URL_S3`: a fake, MinIO, a VPC endpoint), addressed path-style as the SDK does with an override.
 */
export const s3ObjectLocation = (
  bucket: string,
  key: string,
  region: string,
  endpoint?: string
): { protocol: "https:" | "http:"; hostname: string; port?: number; path: string } => {
  if (endpoint === undefined) return { protocol: "https:", ...s3Endpoint(bucket, region, key) }
  const u = new URL(endpoint)
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new PluginError(`invalid S3 endpoint ${endpoint} (expected http(s)://host[:port])`)
  const base = u.pathname.replace(/\/+$/, "")
  return {
    protocol: u.protocol,
    hostname: u.hostname,
    ...(u.port !== "" ? { port: Number(u.port) } : {}),
    path: `${base}/${bucket}/${escapeKey(key)}`
  }
}

export interface PresignInput {
  readonly method: "GET" | "PUT"
  /** Default https. */
  readonly protocol?: "https:" | "http:"
  readonly hostname: string
  /** A port other than the protocol's (an endpoint override). */
  readonly port?: number
  readonly path: string
  readonly region: string
  readonly credentials: AwsCredentials
  readonly expiresInSeconds: number
  readonly signingDate?: Date
}

export const presignS3Url = async (input: PresignInput): Promise<string> => {
  const signer = sigV4Signer({
    service: "s3",
    region: input.region,
    credentials: input.credentials,
    uriEscapePath: false,
    applyChecksum: false
  })
  const protocol = input.protocol ?? "https:"
  const host = input.port !== undefined ? `${input.hostname}:${input.port}` : input.hostname
  const request = new HttpRequest({
    method: input.method,
    protocol,
    hostname: input.hostname,
    ...(input.port !== undefined ? { port: input.port } : {}),
    path: input.path,
    headers: { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }
  })
  // The payload hash is UNSIGNED-PAYLOAD, but the header is neither signed nor put in the query: the URL alone works.
  const signed = await signer.presign(request, {
    expiresIn: input.expiresInSeconds,
    ...(input.signingDate ? { signingDate: input.signingDate } : {}),
    unsignableHeaders: new Set(["x-amz-content-sha256"]),
    unhoistableHeaders: new Set(["x-amz-content-sha256"])
  })
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join("&")
  return `${protocol}//${host}${input.path}?${query}`
}

/** PUT + GET URLs for one node's bundle. */
export const presignBundleUrls = async (
  location: S3Location,
  region: string,
  credentials: AwsCredentials,
  nodeName: string,
  expiresInSeconds: number
): Promise<{ put: string; get: string }> => {
  const key = [location.prefix, `${nodeName}-logs.tar.gz`].filter((s) => s !== "").join("/")
  const { hostname, path } = s3Endpoint(location.bucket, region, key)
  const base = { hostname, path, region, credentials, expiresInSeconds }
  return {
    put: await presignS3Url({ ...base, method: "PUT" }),
    get: await presignS3Url({ ...base, method: "GET" })
  }
}
