/**
 * Checks an S3 presigned URL (SigV4 query-string authentication) the way S3 does, against the credentials the
 * fake knows: every X-Amz-* parameter present and well formed, the access key known, the URL unexpired, and the
 * signature recomputed with the AWS SDK's own signer (`@smithy/signature-v4`) over the request as it arrived
 * (method, raw path, query, signed headers). An unsigned, tampered, expired or foreign URL is refused.
 *
 * The signer comes from its CommonJS build (why: repair-controller's cloud/aws/sigv4.ts).
 */
import { timingSafeEqual } from "node:crypto"
import { createRequire } from "node:module"
import type * as HashNodeModule from "@smithy/hash-node"
import type * as ProtocolHttpModule from "@smithy/protocol-http"
import type * as SignatureV4Module from "@smithy/signature-v4"

const require = createRequire(import.meta.url)
const { Hash } = require("@smithy/hash-node") as typeof HashNodeModule
const { HttpRequest } = require("@smithy/protocol-http") as typeof ProtocolHttpModule
const { SignatureV4 } = require("@smithy/signature-v4") as typeof SignatureV4Module

/** Access key id -> secret access key. */
export type KnownCredentials = ReadonlyMap<string, string>

/** Why S3 refuses: its error code, HTTP status and message. */
export interface S3AuthProblem {
  readonly status: 400 | 403
  readonly code: string
  readonly message: string
}

export interface ArrivedRequest {
  readonly method: string
  /** The path as sent (still percent-encoded), without the query. */
  readonly rawPath: string
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
}

const REQUIRED = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders"]
const SIGNER_PARAMS = new Set([...REQUIRED, "X-Amz-Signature", "X-Amz-Security-Token"])
const CREDENTIAL = /^([A-Za-z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request$/
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/
const MAX_EXPIRES = 7 * 24 * 3600
/** S3 accepts a request dated this far ahead of its clock. */
const CLOCK_SKEW_MS = 15 * 60 * 1000

const denied = (code: string, message: string): S3AuthProblem => ({ status: 403, code, message })
const malformed = (message: string): S3AuthProblem => ({
  status: 400,
  code: "AuthorizationQueryParametersError",
  message
})

const parseAmzDate = (s: string): Date | undefined => {
  const m = AMZ_DATE.exec(s)
  if (!m) return undefined
  const [, y, mo, d, h, mi, se] = m.map(Number)
  return new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, se!))
}

const header = (headers: ArrivedRequest["headers"], name: string): string | undefined => {
  const v = headers[name]
  return Array.isArray(v) ? v.join(",") : v
}

/** The signature this URL should carry, computed by the SDK's signer from what arrived. */
const expectedSignature = async (
  req: ArrivedRequest,
  scope: { accessKeyId: string; secret: string; region: string; service: string },
  signingDate: Date,
  expiresIn: number,
  signedHeaders: ReadonlyArray<string>
): Promise<string> => {
  const headers: Record<string, string> = { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }
  for (const name of signedHeaders) headers[name] = header(req.headers, name) ?? ""
  const query: Record<string, string> = {}
  // The signer adds its own parameters again; every other one (x-id, a hoisted X-Amz-Content-Sha256) is signed.
  for (const [k, v] of req.query) if (!SIGNER_PARAMS.has(k)) query[k] = v
  const token = req.query.get("X-Amz-Security-Token")
  const signer = new SignatureV4({
    service: scope.service,
    region: scope.region,
    credentials: {
      accessKeyId: scope.accessKeyId,
      secretAccessKey: scope.secret,
      ...(token !== null ? { sessionToken: token } : {})
    },
    sha256: Hash.bind(null, "sha256"),
    uriEscapePath: false,
    applyChecksum: false
  })
  const signed = await signer.presign(
    new HttpRequest({
      method: req.method,
      protocol: "http:",
      hostname: "",
      path: req.rawPath,
      query,
      headers
    }),
    {
      signingDate,
      expiresIn,
      // S3's presigned URLs leave the payload out; the header is only the signer's way to be told so.
      unsignableHeaders: new Set(["x-amz-content-sha256"]),
      unhoistableHeaders: new Set(["x-amz-content-sha256", ...signedHeaders])
    }
  )
  return String(signed.query?.["X-Amz-Signature"] ?? "")
}

/** Undefined when the URL is a valid, unexpired presigned URL of a known key; else S3's refusal. */
export const checkPresignedUrl = async (
  req: ArrivedRequest,
  known: KnownCredentials,
  nowMs: number = Date.now()
): Promise<S3AuthProblem | undefined> => {
  const q = req.query
  const signature = q.get("X-Amz-Signature")
  if (signature === null && REQUIRED.every((p) => q.get(p) === null))
    return denied("AccessDenied", "Access Denied")
  const missing = [...REQUIRED, "X-Amz-Signature"].filter((p) => q.get(p) === null)
  if (missing.length > 0)
    return malformed(`Query-string authentication version 4 requires the ${missing.join(", ")} parameters`)
  if (q.get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256")
    return malformed('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"')
  const cred = CREDENTIAL.exec(q.get("X-Amz-Credential")!)
  if (!cred) return malformed("Error parsing the X-Amz-Credential parameter")
  const [, accessKeyId, shortDate, region, service] = cred
  if (service !== "s3")
    return malformed(
      `Error parsing the X-Amz-Credential parameter; incorrect service "${service}". This endpoint belongs to "s3".`
    )
  const signingDate = parseAmzDate(q.get("X-Amz-Date")!)
  if (!signingDate || !q.get("X-Amz-Date")!.startsWith(shortDate!))
    return malformed(
      "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\" and match the credential's date"
    )
  const expiresText = q.get("X-Amz-Expires")!
  const expiresIn = /^\d{1,7}$/.test(expiresText) ? Number(expiresText) : Number.NaN
  if (!(expiresIn >= 1 && expiresIn <= MAX_EXPIRES))
    return malformed("X-Amz-Expires must be between 1 and 604800 seconds")
  const secret = known.get(accessKeyId!)
  if (secret === undefined)
    return denied("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
  if (signingDate.getTime() - nowMs > CLOCK_SKEW_MS) return denied("AccessDenied", "Request is not yet valid")
  if (nowMs > signingDate.getTime() + expiresIn * 1000) return denied("AccessDenied", "Request has expired")
  const signedHeaders = q.get("X-Amz-SignedHeaders")!.split(";")
  if (!signedHeaders.includes("host")) return malformed("X-Amz-SignedHeaders must include host")
  const expected = await expectedSignature(
    req,
    { accessKeyId: accessKeyId!, secret, region: region!, service: service! },
    signingDate,
    expiresIn,
    signedHeaders
  )
  const given = Buffer.from(signature!)
  const want = Buffer.from(expected)
  if (given.length !== want.length || !timingSafeEqual(given, want))
    return denied(
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method."
    )
  return undefined
}
