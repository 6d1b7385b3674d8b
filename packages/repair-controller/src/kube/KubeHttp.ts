/**
 * HTTP to the API server over node:https with one keep-alive connection pool: JSON requests with a timeout,
 * and watch streams (newline-delimited JSON events). Promise-based; `Kube.ts` wraps requests as Effects and
 * the Node informer drives watches from its own loop.
 *
 * Why not @kubernetes/client-node: importing it costs ~56 MiB RSS in the bundle (its generated models and
 * serializer load whole), it builds a new connection per request when TLS settings are present, and the
 * controller makes a dozen kinds of calls (ADR 0007).
 */
import { Agent, request } from "node:https"
import type { IncomingMessage } from "node:http"
import type { KubeAccess } from "@nodemend/kube-access"

export const REQUEST_TIMEOUT_MS = 30_000
/** A watch with no bytes (not even a bookmark, sent about once a minute) for this long is dead. */
export const WATCH_IDLE_TIMEOUT_MS = 120_000

export interface HttpAnswer {
  readonly status: number
  readonly text: string
}

export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"
  readonly object: unknown
}

export interface KubeHttp {
  readonly server: string
  readonly request: (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    body?: unknown,
    contentType?: string
  ) => Promise<HttpAnswer>
  /**
   * Streams a watch until the server ends it (resolves), it fails (rejects; an HTTP error carries
   * `statusCode`), or `signal` aborts it (resolves).
   */
  readonly watch: (path: string, onEvent: (e: WatchEvent) => void, signal: AbortSignal) => Promise<void>
  readonly close: () => void
}

export class HttpStatusError extends Error {
  readonly statusCode: number
  readonly body: string
  constructor(statusCode: number, body: string) {
    super(`HTTP ${statusCode}: ${body.slice(0, 300)}`)
    this.statusCode = statusCode
    this.body = body
  }
}

export const makeKubeHttp = (access: KubeAccess, userAgent: string, maxSockets = 96): KubeHttp => {
  const url = new URL(access.server)
  if (url.protocol !== "https:") throw new Error(`the API server must be https, got ${access.server}`)
  const agent = new Agent({
    keepAlive: true,
    keepAliveMsecs: 30_000,
    maxSockets,
    // Keep every connection of a burst: a closed one costs a TLS handshake on both ends when the next burst
    // (a wave of expiries) comes, on the critical path from expiry to taint.
    maxFreeSockets: maxSockets,
    ...(access.ca === undefined ? {} : { ca: access.ca }),
    ...(access.cert === undefined ? {} : { cert: access.cert }),
    ...(access.key === undefined ? {} : { key: access.key }),
    ...(access.serverName === undefined ? {} : { servername: access.serverName }),
    rejectUnauthorized: !access.insecure
  })
  const prefix = url.pathname.replace(/\/+$/, "")
  const port = url.port === "" ? 443 : Number(url.port)

  const open = async (
    method: string,
    path: string,
    timeoutMs: number,
    payload: Buffer | undefined,
    contentType: string,
    signal?: AbortSignal
  ): Promise<IncomingMessage> => {
    const token = await access.token()
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          host: url.hostname,
          port,
          method,
          path: `${prefix}${path}`,
          timeout: timeoutMs,
          ...(signal !== undefined ? { signal } : {}),
          headers: {
            accept: "application/json",
            "user-agent": userAgent,
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(payload === undefined
              ? {}
              : { "content-type": contentType, "content-length": payload.length })
          }
        },
        resolve
      )
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
      req.on("error", reject)
      req.end(payload)
    })
  }

  const readAll = (res: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      res.on("error", reject)
    })

  return {
    server: access.server,
    request: async (method, path, body, contentType = "application/json") => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
      const res = await open(method, path, REQUEST_TIMEOUT_MS, payload, contentType)
      return { status: res.statusCode ?? 0, text: await readAll(res) }
    },
    watch: async (path, onEvent, signal) => {
      let res: IncomingMessage
      try {
        res = await open("GET", path, WATCH_IDLE_TIMEOUT_MS, undefined, "", signal)
      } catch (e) {
        if (signal.aborted) return
        throw e
      }
      if (res.statusCode !== 200) throw new HttpStatusError(res.statusCode ?? 0, await readAll(res))
      await new Promise<void>((resolve, reject) => {
        let rest = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          rest += chunk
          let nl = rest.indexOf("\n")
          while (nl >= 0) {
            const line = rest.slice(0, nl)
            rest = rest.slice(nl + 1)
            if (line.trim() !== "") {
              try {
                onEvent(JSON.parse(line) as WatchEvent)
              } catch (e) {
                res.destroy(e as Error)
                return
              }
            }
            nl = rest.indexOf("\n")
          }
        })
        res.on("end", () => resolve())
        res.on("close", () => resolve())
        res.on("error", (e) => (signal.aborted ? resolve() : reject(e)))
      })
    },
    close: () => agent.destroy()
  }
}
