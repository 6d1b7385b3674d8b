/**
 * Streams an HTTP(S) GET of a node's bundle into a file, never holding it in memory, hashing it on the way
 * (written to `<file>.partial`). Only a bundle whose SHA-256 and size are the ones the node's agent reported is
 * renamed to `<file>`; any other is renamed to `<file>.untrusted` and is an error (src/bundleVerification.ts).
 * It is kept, not deleted: it is what someone put under the node's key, the evidence an operator needs, and the
 * suffix keeps tools that look for `<node>-logs.tar.gz` from taking it for the node's bundle.
 */
import { createHash } from "node:crypto"
import { createWriteStream } from "node:fs"
import { rename, rm } from "node:fs/promises"
import http, { type IncomingMessage } from "node:http"
import https from "node:https"
import { pipeline } from "node:stream/promises"
import type { KubeHttp } from "@nodemend/kube-access"
import type { BundleDigest } from "@nodemend/kube-access/NodeDiagnostic"
import { matchesReport, UNTRUSTED_SUFFIX, UntrustedBundle } from "./bundleVerification.ts"
import { PluginError } from "./errors.ts"

/** The bundle a download must turn out to be: `node`'s, as its agent reported it (undefined: none reported). */
export interface ExpectedBundle {
  readonly node: string
  readonly digest: BundleDigest | undefined
}

/** Streams an answer into `file` if it is the expected bundle; a non-2xx answer is an error naming `what` and the body's start. */
const save = (
  res: IncomingMessage,
  what: string,
  file: string,
  expected: ExpectedBundle
): Promise<BundleDigest> =>
  new Promise<BundleDigest>((resolve, reject) => {
    const status = res.statusCode ?? 0
    if (status < 200 || status >= 300) {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => {
        if (body.length < 500) body += d
      })
      res.on("end", () =>
        reject(new PluginError(`GET ${what} answered ${status}: ${body.trim().slice(0, 300)}`))
      )
      return
    }
    const tmp = `${file}.partial`
    const hash = createHash("sha256")
    let size = 0
    res.on("data", (d: Buffer) => {
      hash.update(d)
      size += d.length
    })
    pipeline(res, createWriteStream(tmp))
      .then(async () => {
        const actual = { sha256: hash.digest("hex"), size }
        if (matchesReport(expected.digest, actual)) {
          await rename(tmp, file)
          return actual
        }
        const aside = `${file}${UNTRUSTED_SUFFIX}`
        // A bundle from an earlier run under the same name would read as this run's result.
        await rm(file, { force: true })
        await rename(tmp, aside)
        throw new UntrustedBundle(expected.node, expected.digest, actual, aside)
      })
      .then(resolve, async (e: Error) => {
        await rm(tmp, { force: true })
        reject(e instanceof PluginError ? e : new PluginError(`download failed: ${e.message}`))
      })
  })

const get = (url: URL, file: string, timeoutMs: number, expected: ExpectedBundle): Promise<BundleDigest> =>
  new Promise<BundleDigest>((resolve, reject) => {
    const lib = url.protocol === "https:" ? https : http
    const req = lib.request(url, { method: "GET", timeout: timeoutMs }, (res) =>
      save(res, `${url.origin}${url.pathname}`, file, expected).then(resolve, reject)
    )
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on("error", (e) => reject(new PluginError(`GET ${url.origin}${url.pathname}: ${e.message}`)))
    req.end()
  })

/** GET of a plain URL (the GET twin of a presigned PUT URL). */
export const downloadUrl = (
  url: string,
  file: string,
  timeoutMs: number,
  expected: ExpectedBundle
): Promise<BundleDigest> => get(new URL(url), file, timeoutMs, expected)

/** GET through the API server (node proxy), over the plugin's connection and credentials. */
export const downloadThroughApiServer = async (
  kube: KubeHttp,
  path: string,
  file: string,
  timeoutMs: number,
  expected: ExpectedBundle
): Promise<BundleDigest> => {
  const res = await kube.stream(path, timeoutMs).catch((e: unknown) => {
    throw new PluginError(`GET ${kube.server}${path}: ${e instanceof Error ? e.message : String(e)}`)
  })
  return save(res, `${kube.server}${path}`, file, expected)
}
