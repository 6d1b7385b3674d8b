/**
 * /healthz (the process serves), /readyz (the first condition reconcile reached the API server) and
 * /metrics (Prometheus text exposition of the Effect metric registry). A plain node:http server: three
 * fixed routes do not need a router, and the agent's memory budget is small.
 *
 * It listens on one address. The agent runs with hostNetwork, so "every interface" is every interface of the
 * node (public, secondary ENIs, bridges): the DaemonSet binds the pod IP (the node's address the kubelet
 * probes and Prometheus scrapes), the systemd unit 127.0.0.1. An empty host, or 0.0.0.0 / ::, is every
 * interface and has to be asked for.
 */
import { isIP } from "node:net"
import { Context, Data, Effect, Layer, Result, Schema } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { nodeHttp } from "../platform/node-http.ts"

export class HealthServerError extends Data.TaggedError("HealthServerError")<{
  readonly address: string
  readonly detail: string
}> {
  override get message(): string {
    return `health address "${this.address}": ${this.detail}`
  }
}

export interface HealthServerOptions {
  /** `HOST:PORT` (HOST an IP address, IPv6 optionally in brackets) or `:PORT`; port 0 picks a free one. */
  readonly address: string
  /** Completes when the agent is ready. */
  readonly ready: Effect.Effect<void>
}

export class HealthServer extends Context.Service<HealthServer, { readonly port: number }>()(
  "@nodemend/agent/HealthServer"
) {}

export interface ListenAddress {
  /** undefined: every interface. */
  readonly host: string | undefined
  readonly port: number
}

/**
 * `HOST:PORT`, the port after the last colon (so a bare IPv6 address from the downward API works too). A host
 * name is refused: what it resolves to, and so what is exposed, would depend on the node's resolver.
 */
export const parseAddress = (address: string): Result.Result<ListenAddress, HealthServerError> => {
  const fail = (detail: string) => Result.fail(new HealthServerError({ address, detail }))
  const i = address.lastIndexOf(":")
  if (i < 0) return fail("expected HOST:PORT or :PORT")
  const portText = address.slice(i + 1)
  const port = Number(portText)
  if (!/^\d{1,5}$/.test(portText) || port > 65535) return fail(`invalid port "${portText}"`)
  const raw = address.slice(0, i)
  const host = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw
  if (host === "") return Result.succeed({ host: undefined, port })
  if (isIP(host) === 0)
    return fail(
      `"${host}" is not an IP address (give the node's address, 127.0.0.1, or nothing for every interface)`
    )
  return Result.succeed({ host, port })
}

/** The `--health-address` flag: decodes only what parseAddress accepts, with its reason otherwise. */
export const HealthAddress = Schema.String.check(
  Schema.makeFilter((s: string) => {
    const r = parseAddress(s)
    return Result.isSuccess(r) || r.failure.message
  })
)

export const healthServerLayer = (
  options: HealthServerOptions
): Layer.Layer<HealthServer, HealthServerError> =>
  Layer.effect(
    HealthServer,
    Effect.gen(function* () {
      const context = yield* Effect.context<never>()
      let ready = false
      yield* Effect.forkScoped(options.ready.pipe(Effect.andThen(Effect.sync(() => (ready = true)))))
      const { host, port } = yield* Effect.fromResult(parseAddress(options.address))
      const server = nodeHttp.createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0]
        if (req.method !== "GET") {
          res.writeHead(405).end()
        } else if (path === "/healthz") {
          res.writeHead(200, { "content-type": "text/plain" }).end("ok")
        } else if (path === "/readyz") {
          res.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(ready ? "ok" : "not ready")
        } else if (path === "/metrics") {
          res
            .writeHead(200, { "content-type": "text/plain; version=0.0.4" })
            .end(PrometheusMetrics.formatUnsafe(context))
        } else {
          res.writeHead(404).end()
        }
      })
      const actual = yield* Effect.acquireRelease(
        // An address that is not this node's (EADDRNOTAVAIL) or is taken fails the agent's start, named.
        Effect.callback<number, HealthServerError>((resume) => {
          server.once("error", (e) =>
            resume(Effect.fail(new HealthServerError({ address: options.address, detail: e.message })))
          )
          server.listen(port, host, () => {
            const a = server.address()
            resume(Effect.succeed(typeof a === "object" && a !== null ? a.port : port))
          })
        }),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      yield* Effect.logInfo("health server listening", {
        address: options.address,
        host: host ?? "every interface",
        port: actual
      })
      return HealthServer.of({ port: actual })
    })
  )
