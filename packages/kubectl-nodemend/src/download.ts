/** Streams an HTTP(S) GET into a file (written to `<file>.partial`, then renamed), never holding it in memory. */
import { createWriteStream } from "node:fs"
import { rename, rm } from "node:fs/promises"
import http from "node:http"
import https from "node:https"
import { pipeline } from "node:stream/promises"
import type { KubeConfig } from "@kubernetes/client-node"
import { PluginError } from "./errors.ts"

const get = (url: URL, options: https.RequestOptions, file: string, timeoutMs: number): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const lib = url.protocol === "https:" ? https : http
    const req = lib.request(url, { ...options, method: "GET", timeout: timeoutMs }, (res) => {
      const status = res.statusCode ?? 0
      if (status < 200 || status >= 300) {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (d: string) => {
          if (body.length < 500) body += d
        })
        res.on("end", () =>
          reject(
            new PluginError(
              `GET ${url.origin}${url.pathname} answered ${status}: ${body.trim().slice(0, 300)}`
            )
          )
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
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on("error", (e) => reject(new PluginError(`GET ${url.origin}${url.pathname}: ${e.message}`)))
    req.end()
  })

/** GET of a plain URL (the GET twin of a presigned PUT URL). */
export const downloadUrl = (url: string, file: string, timeoutMs: number): Promise<number> =>
  get(new URL(url), {}, file, timeoutMs)

/** GET through the API server (node proxy), authenticated with the kubeconfig's credentials. */
export const downloadThroughApiServer = async (
  kc: KubeConfig,
  path: string,
  file: string,
  timeoutMs: number
): Promise<number> => {
  const server = kc.getCurrentCluster()?.server
  if (!server) throw new PluginError("no current cluster in kubeconfig")
  const options: https.RequestOptions = {}
  await kc.applyToHTTPSOptions(options)
  return get(new URL(server.replace(/\/$/, "") + path), options, file, timeoutMs)
}
