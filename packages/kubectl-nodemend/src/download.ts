/** Streams an HTTP(S) GET into a file (written to `<file>.partial`, then renamed), never holding it in memory. */
import { createWriteStream } from "node:fs"
import { rename, rm } from "node:fs/promises"
import http, { type IncomingMessage } from "node:http"
import https from "node:https"
import { pipeline } from "node:stream/promises"
import type { KubeHttp } from "@nodemend/kube-access"
import { PluginError } from "./errors.ts"

/** Streams an answer into `file`; a non-2xx answer is an error naming `what` and the body's start. */
const save = (res: IncomingMessage, what: string, file: string): Promise<number> =>
  new Promise<number>((resolve, reject) => {
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
    let bytes = 0
    res.on("data", (d: Buffer) => {
      bytes += d.length
    })
    pipeline(res, createWriteStream(tmp))
      .then(() => rename(tmp, file))
      .then(
        () => resolve(bytes),
        async (e: Error) => {
          await rm(tmp, { force: true })
          reject(new PluginError(`download failed: ${e.message}`))
        }
      )
  })

const get = (url: URL, file: string, timeoutMs: number): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const lib = url.protocol === "https:" ? https : http
    const req = lib.request(url, { method: "GET", timeout: timeoutMs }, (res) =>
      save(res, `${url.origin}${url.pathname}`, file).then(resolve, reject)
    )
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on("error", (e) => reject(new PluginError(`GET ${url.origin}${url.pathname}: ${e.message}`)))
    req.end()
  })

/** GET of a plain URL (the GET twin of a presigned PUT URL). */
export const downloadUrl = (url: string, file: string, timeoutMs: number): Promise<number> =>
  get(new URL(url), file, timeoutMs)

/** GET through the API server (node proxy), over the plugin's connection and credentials. */
export const downloadThroughApiServer = async (
  kube: KubeHttp,
  path: string,
  file: string,
  timeoutMs: number
): Promise<number> => {
  const res = await kube.stream(path, timeoutMs).catch((e: unknown) => {
    throw new PluginError(`GET ${kube.server}${path}: ${e instanceof Error ? e.message : String(e)}`)
  })
  return save(res, `${kube.server}${path}`, file)
}
