/**
 * JSON requests and watches to the API server over one keep-alive HTTPS agent, with a per-request timeout
 * (for watches: an inactivity timeout). Non-2xx answers become a KubeError carrying the Status message.
 */
import { Data, Effect } from "effect"
import { Agent, request } from "node:https"
import type { KubeAccess } from "@nodemend/kube-access"

export class KubeError extends Data.TaggedError("KubeError")<{
  readonly operation: string
  readonly code: number | undefined
  readonly detail: string
}> {
  override get message(): string {
    return `${this.operation} failed${this.code === undefined ? "" : ` (HTTP ${this.code})`}: ${this.detail}`
  }
}

export interface KubeHttp {
  readonly call: (
    operation: string,
    method: "GET" | "POST" | "PATCH",
    path: string,
    body?: unknown,
    contentType?: string
  ) => Effect.Effect<unknown, KubeError>
  /**
   * Streams a watch (`path` already carries `watch=1` and its query): each newline-delimited JSON event
   * goes to `onEvent`; succeeds when the server ends the watch, fails on a non-2xx answer, a broken
   * connection or `idleMs` without a byte (bookmarks arrive about once a minute).
   */
  readonly watch: (
    operation: string,
    path: string,
    onEvent: (event: unknown) => void,
    idleMs: number
  ) => Effect.Effect<void, KubeError>
  readonly close: () => void
}

export const REQUEST_TIMEOUT_MS = 10_000

/** Splits a watch body into JSON lines; a line that is not JSON is passed on as undefined. */
const jsonLines = (onEvent: (event: unknown) => void) => {
  let pending = ""
  return (chunk: string) => {
    pending += chunk
    let nl = pending.indexOf("\n")
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim()
      pending = pending.slice(nl + 1)
      if (line !== "") {
        let event: unknown
        try {
          event = JSON.parse(line)
        } catch {
          event = undefined
        }
        onEvent(event)
      }
      nl = pending.indexOf("\n")
    }
  }
}

export const makeKubeHttp = (access: KubeAccess, userAgent = "nodemend-agent"): KubeHttp => {
  const url = new URL(access.server)
  if (url.protocol !== "https:") throw new Error(`the API server must be https, got ${access.server}`)
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 4,
    ...(access.ca === undefined ? {} : { ca: access.ca }),
    ...(access.cert === undefined ? {} : { cert: access.cert }),
    ...(access.key === undefined ? {} : { key: access.key }),
    ...(access.serverName === undefined ? {} : { servername: access.serverName }),
    rejectUnauthorized: !access.insecure
  })
  const prefix = url.pathname.replace(/\/+$/, "")
  const headers = (token: string | undefined) => ({
    accept: "application/json",
    "user-agent": userAgent,
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
  })
  const call: KubeHttp["call"] = (operation, method, path, body, contentType = "application/json") =>
    Effect.tryPromise({
      try: async (signal) => {
        const token = await access.token()
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
        return await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(
            {
              agent,
              host: url.hostname,
              port: url.port === "" ? 443 : Number(url.port),
              method,
              path: `${prefix}${path}`,
              signal,
              timeout: REQUEST_TIMEOUT_MS,
              headers: {
                ...headers(token),
                ...(payload === undefined
                  ? {}
                  : { "content-type": contentType, "content-length": payload.length })
              }
            },
            (res) => {
              const chunks: Buffer[] = []
              res.on("data", (c: Buffer) => chunks.push(c))
              res.on("end", () =>
                resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") })
              )
              res.on("error", reject)
            }
          )
          req.on("timeout", () => req.destroy(new Error(`timed out after ${REQUEST_TIMEOUT_MS} ms`)))
          req.on("error", reject)
          req.end(payload)
        })
      },
      catch: (e) =>
        new KubeError({ operation, code: undefined, detail: e instanceof Error ? e.message : String(e) })
    }).pipe(
      Effect.flatMap(({ status, text }) => {
        let json: unknown
        try {
          json = text === "" ? undefined : JSON.parse(text)
        } catch {
          json = undefined
        }
        if (status >= 200 && status < 300) return Effect.succeed(json)
        const message = (json as { message?: unknown } | undefined)?.message
        return Effect.fail(
          new KubeError({
            operation,
            code: status,
            detail: typeof message === "string" ? message : text.slice(0, 500)
          })
        )
      })
    )
  const watch: KubeHttp["watch"] = (operation, path, onEvent, idleMs) =>
    Effect.tryPromise({
      try: async (signal) => {
        const token = await access.token()
        return await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(
            {
              agent,
              host: url.hostname,
              port: url.port === "" ? 443 : Number(url.port),
              method: "GET",
              path: `${prefix}${path}`,
              signal,
              timeout: idleMs,
              headers: headers(token)
            },
            (res) => {
              const status = res.statusCode ?? 0
              res.setEncoding("utf8")
              if (status < 200 || status >= 300) {
                let text = ""
                res.on("data", (c: string) => {
                  text += c
                })
                res.on("end", () => resolve({ status, text }))
              } else {
                const feed = jsonLines(onEvent)
                res.on("data", feed)
                res.on("end", () => resolve({ status, text: "" }))
              }
              res.on("error", reject)
            }
          )
          req.on("timeout", () => req.destroy(new Error(`no bytes for ${idleMs} ms`)))
          req.on("error", reject)
          req.end()
        })
      },
      catch: (e) =>
        new KubeError({ operation, code: undefined, detail: e instanceof Error ? e.message : String(e) })
    }).pipe(
      Effect.flatMap(({ status, text }) => {
        if (status >= 200 && status < 300) return Effect.void
        let message: unknown
        try {
          message = (JSON.parse(text) as { message?: unknown }).message
        } catch {
          message = undefined
        }
        return Effect.fail(
          new KubeError({
            operation,
            code: status,
            detail: typeof message === "string" ? message : text.slice(0, 500)
          })
        )
      })
    )
  return { call, watch, close: () => agent.destroy() }
}

/** events.k8s.io MicroTime: RFC 3339 with exactly six fractional digits. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")
