/**
 * S3 PUT and GET object, path-style (`/<bucket>/<key>`) on the fake's own endpoint, for presigned URLs only:
 * every request must carry a valid SigV4 query signature of a key the fake knows (PresignedAuth.ts); a refusal is
 * S3's XML error. Buckets need no creating. The body is read raw (a bundle is binary).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { newRequestId } from "../ec2/Ec2Xml.ts"
import type { ObjectStore } from "./ObjectStore.ts"
import { checkPresignedUrl, type KnownCredentials } from "./PresignedAuth.ts"

const OBJECT_PATH = /^\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/
/** First path segments the fake's other APIs use: never bucket names here. */
const NOT_BUCKETS = new Set(["admin", "managedresources", "zonalshifts", "autoshifts", "metrics", "healthz"])
/** S3's single PUT limit. */
const MAX_OBJECT_BYTES = 5 * 1024 ** 3

/** Whether a request is an S3 object request (and must not be read as text by the other routes). */
export const isS3ObjectRequest = (method: string, pathname: string): boolean => {
  if (method !== "PUT" && method !== "GET" && method !== "HEAD") return false
  const m = OBJECT_PATH.exec(pathname)
  return m !== null && !NOT_BUCKETS.has(m[1]!)
}

const xmlEscape = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const sendError = (
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  resource: string,
  requestId: string
) => {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message><Resource>${xmlEscape(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`
  res.writeHead(status, {
    "content-type": "application/xml",
    "content-length": Buffer.byteLength(body),
    "x-amz-request-id": requestId
  })
  res.end(res.req.method === "HEAD" ? undefined : body)
}

const readRaw = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

export const handleS3Object = async (
  req: IncomingMessage,
  res: ServerResponse,
  objects: ObjectStore,
  known: KnownCredentials,
  log: (line: string) => void
): Promise<void> => {
  const requestId = newRequestId()
  const rawUrl = req.url ?? "/"
  const q = rawUrl.indexOf("?")
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q)
  const query = new URLSearchParams(q < 0 ? "" : rawUrl.slice(q + 1))
  const [, bucket, rawKey] = OBJECT_PATH.exec(rawPath) ?? []
  const key = decodeURIComponent(rawKey ?? "")
  const method = req.method ?? "GET"
  const problem = await checkPresignedUrl({ method, rawPath, query, headers: req.headers }, known)
  if (problem) {
    req.resume()
    log(`s3 ${method} /${bucket}/${key} refused: ${problem.code}`)
    return sendError(res, problem.status, problem.code, problem.message, rawPath, requestId)
  }
  if (method === "PUT") {
    // S3 takes no chunked upload without its own signing scheme: a presigned PUT has a Content-Length.
    if (req.headers["content-length"] === undefined) {
      req.resume()
      return sendError(
        res,
        411,
        "MissingContentLength",
        "You must provide the Content-Length HTTP header.",
        rawPath,
        requestId
      )
    }
    if (Number(req.headers["content-length"]) > MAX_OBJECT_BYTES) {
      req.resume()
      return sendError(
        res,
        400,
        "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed size",
        rawPath,
        requestId
      )
    }
    const body = await readRaw(req)
    const stored = objects.put(bucket!, key, body, req.headers["content-type"])
    res.writeHead(200, { etag: stored.etag, "x-amz-request-id": requestId, "content-length": 0 })
    return void res.end()
  }
  req.resume()
  const stored = objects.get(bucket!, key)
  if (!stored)
    return sendError(res, 404, "NoSuchKey", "The specified key does not exist.", rawPath, requestId)
  res.writeHead(200, {
    "content-type": stored.contentType,
    "content-length": stored.body.length,
    etag: stored.etag,
    "last-modified": stored.lastModified.toUTCString(),
    "x-amz-request-id": requestId
  })
  res.end(method === "HEAD" ? undefined : stored.body)
}
