/** /healthz (process alive), /readyz (informer synced, or standing by for the lease), /metrics (Prometheus). */
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"

export interface Readiness {
  /** "standby" replicas are ready too: they are healthy and waiting for the lease. */
  readonly state: () => "starting" | "standby" | "leading" | "synced"
}

export const serverLayer = (port: number, readiness: Readiness) =>
  HttpRouter.serve(
    Layer.mergeAll(
      HttpRouter.add("GET", "/healthz", HttpServerResponse.text("ok")),
      HttpRouter.add(
        "GET",
        "/readyz",
        Effect.sync(() => {
          const s = readiness.state()
          return s === "standby" || s === "synced"
            ? HttpServerResponse.text(s)
            : HttpServerResponse.text(s, { status: 503 })
        })
      ),
      PrometheusMetrics.layerHttp({ path: "/metrics", prefix: "nodemend_controller" })
    ),
    { disableLogger: true }
  ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })))
