/**
 * HTTP to the API server over node:https with one keep-alive connection pool (one TLS connection while calls
 * do not overlap): JSON calls with a timeout and watch streams (newline-delimited JSON events), as Effects
 * whose interruption aborts the request. Every nodemend binary reaches the API server through this (ADR 0011).
 */
import type { IncomingMessage } from "node:http"
import { Agent, request } from "node:https"
import { Effect } from "effect"
import type { KubeAccess } from "./KubeAccess.ts"
import { httpKubeError, type KubeError, transportKubeError } from "./KubeError.ts"

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface KubeHttpOptions {
  readonly userAgent: string
  /** No byte of an answer for this long fails the call. Default 30 s. */
  readonly requestTimeoutMs?: number
  /** Connections at most. Default 4. */
  readonly maxSockets?: number
  /**
   * Idle connections kept for the next call. Default `maxSockets`: a closed one costs a TLS handshake on the
   * next burst.
   */
  readonly maxFreeSockets?: number
}

export interface KubeHttp {
  readonly server: string
  /** A JSON call; the parsed answer (undefined for an empty body). Non-2xx answers fail with the Status. */
  readonly call: (
    operation: string,
    method: HttpMethod,
    path: string,
    body?: unknown,
    contentType?: string
  ) => Effect.Effect<unknown, KubeError>
  /**
   * Streams a watch (`path` carries `watch=1` and its query): each newline-delimited JSON event goes to
   * `onEvent` (a line that is not JSON as undefined); succeeds when the server ends the watch, fails on a
   * non-2xx answer, a broken connection or `idleMs` without a byte (bookmarks arrive about once a minute).
   */
  readonly watch: (
    operation: string,
    path: string,
    onEvent: (event: unknown) => void,
    idleMs: number
  ) => Effect.Effect<void, KubeError>
  /** A GET whose answer is read by the caller (a file download through the API server's node proxy). */
  readonly stream: (path: string, timeoutMs: number) => Promise<IncomingMessage>
  readonly close: () => void
}

const readAll = (res: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    res.on("data", (c: Buffer) => chunks.push(c))
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    res.on("error", reject)
  })

/** Splits a watch body into JSON lines. */
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

export const makeKubeHttp = (access: KubeAccess, options: KubeHttpOptions): KubeHttp => {
  const url = new URL(access.server)
  if (url.protocol !== "https:") throw new Error(`the API server must be https, got ${access.server}`)
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  const maxSockets = options.maxSockets ?? 4
  const agent = new Agent({
    keepAlive: true,
    keepAliveMsecs: 30_000,
    maxSockets,
    maxFreeSockets: options.maxFreeSockets ?? maxSockets,
    ...(access.ca === undefined ? {} : { ca: access.ca }),
    ...(access.cert === undefined ? {} : { cert: access.cert }),
    ...(access.key === undefined ? {} : { key: access.key }),
    ...(access.serverName === undefined ? {} : { servername: access.serverName }),
    rejectUnauthorized: !access.insecure
  })
  const prefix = url.pathname.replace(/\/+$/, "")
  const port = url.port === "" ? 443 : Number(url.port)

  const open = async (
    method: HttpMethod,
    path: string,
    timeoutMs: number,
    payload?: { readonly bytes: Buffer; readonly contentType: string },
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
          ...(signal === undefined ? {} : { signal }),
          headers: {
            accept: "application/json",
            "user-agent": options.userAgent,
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(payload === undefined
              ? {}
              : { "content-type": payload.contentType, "content-length": payload.bytes.length })
          }
        },
        resolve
      )
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
      req.on("error", reject)
      req.end(payload?.bytes)
    })
  }

  const ok = (status: number | undefined) => status !== undefined && status >= 200 && status < 300

  const call: KubeHttp["call"] = (operation, method, path, body, contentType = "application/json") =>
    Effect.tryPromise({
      try: async (signal) => {
        const payload =
          body === undefined ? undefined : { bytes: Buffer.from(JSON.stringify(body)), contentType }
        const res = await open(method, path, requestTimeoutMs, payload, signal)
        return { status: res.statusCode ?? 0, text: await readAll(res) }
      },
      catch: (e) => transportKubeError(operation, e)
    }).pipe(
      Effect.flatMap(({ status, text }) =>
        ok(status)
          ? Effect.try({
              try: () => (text === "" ? undefined : (JSON.parse(text) as unknown)),
              catch: (e) => transportKubeError(operation, `unreadable answer: ${String(e)}`)
            })
          : Effect.fail(httpKubeError(operation, status, text))
      )
    )

  const watch: KubeHttp["watch"] = (operation, path, onEvent, idleMs) =>
    Effect.tryPromise({
      try: async (signal) => {
        const res = await open("GET", path, idleMs, undefined, signal)
        if (!ok(res.statusCode)) return { status: res.statusCode ?? 0, text: await readAll(res) }
        await new Promise<void>((resolve, reject) => {
          res.setEncoding("utf8")
          res.on("data", jsonLines(onEvent))
          res.on("end", resolve)
          res.on("error", reject)
        })
        return { status: res.statusCode ?? 200, text: "" }
      },
      catch: (e) => transportKubeError(operation, e)
    }).pipe(
      Effect.flatMap(({ status, text }) =>
        ok(status) ? Effect.void : Effect.fail(httpKubeError(operation, status, text))
      )
    )

  return {
    server: access.server,
    call,
    watch,
    stream: (path, timeoutMs) => open("GET", path, timeoutMs),
    close: () => agent.destroy()
  }
}
