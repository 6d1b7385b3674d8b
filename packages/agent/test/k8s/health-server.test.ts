import { Context, Deferred, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { HealthServer, healthServerLayer } from "../../src/health/health-server.ts"
import { checkRunsTotal, inc } from "../../src/health/metrics.ts"

describe("health server", () => {
  it("serves /healthz at once, /readyz after ready, and Prometheus /metrics", async () => {
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const ready = yield* Deferred.make<void>()
        const ctx = yield* Layer.build(
          healthServerLayer({ address: "127.0.0.1:0", ready: Deferred.await(ready) })
        )
        const { port } = Context.getUnsafe(ctx, HealthServer)
        const get = (p: string) =>
          Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}${p}`).then(async (r) => [r.status, await r.text()] as const)
          )
        const healthz = yield* get("/healthz")
        const notReady = yield* get("/readyz")
        yield* Deferred.succeed(ready, undefined)
        yield* Effect.sleep("20 millis")
        const readyz = yield* get("/readyz")
        yield* inc(checkRunsTotal, { check: "pid-usage", outcome: "ok" })
        const metrics = yield* get("/metrics")
        const missing = yield* get("/nope")
        return { healthz, notReady, readyz, metrics, missing }
      }).pipe(Effect.scoped)
    )
    expect(out.healthz).toEqual([200, "ok"])
    expect(out.notReady[0]).toBe(503)
    expect(out.readyz).toEqual([200, "ok"])
    expect(out.metrics[1]).toContain('nodemend_agent_check_runs_total{check="pid-usage",outcome="ok"} 1')
    expect(out.missing[0]).toBe(404)
  })
})
