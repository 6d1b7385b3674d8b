/**
 * Delivers a finished bundle: onto the node (under the kubelet's /var/log, so `GET
 * /api/v1/nodes/<node>/proxy/logs/nodemend/<node>-logs.tar.gz` serves it) or by HTTP PUT to a URL the
 * DestinationPolicy allowed. The PUT streams the file with a Content-Length (S3 refuses chunked uploads),
 * follows no redirect (a 3xx would let an allowed host bounce the bundle elsewhere), refuses a host name that
 * resolves to a loopback, link-local or metadata address, and is time-bounded. What the destination answers
 * is never repeated: the status a NodeDiagnostic author can read carries the status code only (an allowed
 * host's error page is not the agent's to publish, and a body could be made to look like anything).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { createReadStream } from "node:fs"
import { copyFile, mkdir, readdir, rename, rm, stat } from "node:fs/promises"
import https from "node:https"
import type { LookupFunction } from "node:net"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import { nodeHttp } from "../platform/node-http.ts"
import { classifyHost } from "../config/destination-allowlist.ts"
import { describeUrl } from "./DestinationPolicy.ts"

/** Relative to the host root; the kubelet's /logs/ handler serves the host's /var/log. */
export const NODE_BUNDLE_DIR = "var/log/nodemend"
export const NODE_BUNDLE_RETENTION_MS = 10 * 60 * 1000

export const nodeBundleName = (nodeName: string) => `${nodeName}-logs.tar.gz`

/** Path of a node-destination bundle through the API server's node proxy to the kubelet. */
export const kubeletProxyBundlePath = (nodeName: string) =>
  `/api/v1/nodes/${encodeURIComponent(nodeName)}/proxy/logs/nodemend/${encodeURIComponent(nodeBundleName(nodeName))}`

/** Moves the bundle into `<hostRoot>/var/log/nodemend/<node>-logs.tar.gz` (atomically replacing an older one). */
export const deliverToNode = async (
  bundlePath: string,
  hostRoot: string,
  nodeName: string
): Promise<string> => {
  const dir = join(hostRoot, NODE_BUNDLE_DIR)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const target = join(dir, nodeBundleName(nodeName))
  const tmp = `${target}.partial`
  await copyFile(bundlePath, tmp)
  await rename(tmp, target)
  return target
}

/** Deletes node-destination bundles older than the retention (run at start and after each delivery). */
export const pruneNodeBundles = async (
  hostRoot: string,
  nowMs: number,
  retentionMs = NODE_BUNDLE_RETENTION_MS
) => {
  const dir = join(hostRoot, NODE_BUNDLE_DIR)
  const names = await readdir(dir).catch(() => [] as string[])
  for (const n of names) {
    const p = join(dir, n)
    const st = await stat(p).catch(() => undefined)
    if (st && nowMs - st.mtimeMs >= retentionMs) await rm(p, { force: true })
  }
}

export class UploadFailed extends Error {}

/**
 * dns.lookup that fails when any address of the name is loopback, link-local or cloud metadata: the policy
 * checked the URL's host as written, this checks where the name points. IP literals never reach a lookup.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address: string | LookupAddress[], family?: number) => {
    if (err) return callback(err, address, family)
    const all = Array.isArray(address) ? address : [{ address, family: family ?? 0 }]
    const bad = all.find((a) => classifyHost(a.address) !== "other")
    if (bad)
      return callback(
        new Error(`${hostname} resolves to ${bad.address}, a loopback, link-local or metadata address`),
        address,
        family
      )
    callback(null, address, family)
  })
}

export interface UploadResult {
  readonly status: number
  readonly bytes: number
}

/**
 * PUTs the file to `url`; resolves on 2xx, rejects with UploadFailed otherwise. The message names the URL
 * without its query and the status code, never the response body.
 */
export const uploadBundle = async (
  bundlePath: string,
  url: URL,
  timeoutMs: number
): Promise<UploadResult> => {
  const { size } = await stat(bundlePath)
  const lib = url.protocol === "https:" ? https : nodeHttp
  const where = describeUrl(url)
  return new Promise<UploadResult>((resolve, reject) => {
    const req = lib.request(
      url,
      {
        method: "PUT",
        headers: { "content-length": String(size), "content-type": "application/gzip" },
        timeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
        lookup: guardedLookup
      },
      (res) => {
        // Drained, never read: see the module comment.
        res.resume()
        res.on("end", () => {
          const status = res.statusCode ?? 0
          if (status >= 200 && status < 300) resolve({ status, bytes: size })
          else {
            // The phrase comes from Node's own table, not from the server's status line.
            const phrase = nodeHttp.STATUS_CODES[status]
            reject(new UploadFailed(`PUT ${where} answered ${status}${phrase ? ` (${phrase})` : ""}`))
          }
        })
        res.on("error", (e) => reject(new UploadFailed(`PUT ${where}: ${e.message}`)))
      }
    )
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on("error", (e) => reject(new UploadFailed(`PUT ${where}: ${e.message}`)))
    pipeline(createReadStream(bundlePath), req).catch((e: Error) =>
      reject(new UploadFailed(`PUT ${where}: ${e.message}`))
    )
  })
}
