/**
 * /healthz (the process serves), /readyz (the first condition reconcile reached the API server) and
 * /metrics (Prometheus text exposition of the Effect metric registry). A plain node:http server: three
 * fixed routes do not need a router, and the agent's memory budget is small.
 */
import { Context, Effect, Layer } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { nodeHttp } from "../platform/node-http.ts"

export class HealthServerError extends Error {}

export interface HealthServerOptions {
  /** `host:port` or `:port`; port 0 picks a free one. */
  readonly address: string
  /** Completes when the agent is ready. */
  readonly ready: Effect.Effect<void>
}

export class HealthServer extends Context.Service<HealthServer, { readonly port: number }>()(
  "@nodemend/agent/HealthServer"
) {}

export const parseAddress = (address: string): { host: string | undefined; port: number } => {
  const i = address.lastIndexOf(":")
  const host = i <= 0 ? undefined : address.slice(0, i)
  const port = Number(address.slice(i + 1))
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new HealthServerError(`invalid address "${address}"`)
  return { host, port }
}

export const healthServerLayer = (options: HealthServerOptions): Layer.Layer<HealthServer> =>
  Layer.effect(
    HealthServer,
    Effect.gen(function* () {
      const context = yield* Effect.context<never>()
      let ready = false
      yield* Effect.forkScoped(options.ready.pipe(Effect.andThen(Effect.sync(() => (ready = true)))))
      const { host, port } = parseAddress(options.address)
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
        Effect.callback<number>((resume) => {
          server.listen(port, host, () => {
            const a = server.address()
            resume(Effect.succeed(typeof a === "object" && a !== null ? a.port : port))
          })
        }),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      yield* Effect.logInfo("health server listening", { address: options.address, port: actual })
      return HealthServer.of({ port: actual })
    })
  )
