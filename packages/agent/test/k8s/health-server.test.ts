import { connect } from "node:net"
import { Context, Deferred, Effect, Exit, Layer, Result } from "effect"
import { describe, expect, it } from "vitest"
import { HealthServer, healthServerLayer, parseAddress } from "../../src/health/health-server.ts"
import { parseFlags } from "../../src/main.ts"
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
    // Other tests of the same worker may have counted runs of pid-usage in the process-wide registry too.
    expect(out.metrics[1]).toMatch(
      /^nodemend_agent_check_runs_total\{check="pid-usage",outcome="ok"\} [1-9]\d*$/m
    )
    expect(out.missing[0]).toBe(404)
  })

  /** "open" when a TCP connection to host:port is accepted, else the error code (ECONNREFUSED). */
  const probe = (host: string, port: number) =>
    new Promise<string>((resolve) => {
      const socket = connect({ host, port })
      socket.once("connect", () => {
        socket.destroy()
        resolve("open")
      })
      socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
    })

  const listening = <A>(address: string, use: (port: number) => Promise<A>) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const ctx = yield* Layer.build(healthServerLayer({ address, ready: Effect.void }))
        const { port } = Context.getUnsafe(ctx, HealthServer)
        return yield* Effect.promise(() => use(port))
      }).pipe(Effect.scoped)
    )

  it("listens on the configured address only", async () => {
    const seen = await listening("127.0.0.2:0", async (port) => ({
      configured: await probe("127.0.0.2", port),
      otherLoopback: await probe("127.0.0.3", port),
      localhost: await probe("127.0.0.1", port),
      metrics: await fetch(`http://127.0.0.2:${port}/metrics`).then((r) => r.status)
    }))
    expect(seen).toEqual({
      configured: "open",
      otherLoopback: "ECONNREFUSED",
      localhost: "ECONNREFUSED",
      metrics: 200
    })
  })

  it("listens on an IPv6 address, bracketed or bare as the downward API gives it", async () => {
    for (const address of ["[::1]:0", "::1:0"]) {
      const seen = await listening(address, async (port) => [
        await probe("::1", port),
        await probe("127.0.0.1", port)
      ])
      expect(seen).toEqual(["open", "ECONNREFUSED"])
    }
  })

  it("every interface only when asked for with an empty host", async () => {
    expect(await listening(":0", (port) => probe("127.0.0.3", port))).toBe("open")
  })

  it("fails the start, naming the address, when the address is not this host's", async () => {
    const exit = await Effect.runPromiseExit(
      Layer.build(healthServerLayer({ address: "192.0.2.1:0", ready: Effect.void })).pipe(Effect.scoped)
    )
    expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(
      /health address "192.0.2.1:0": .*EADDRNOTAVAIL/
    )
  })

  it("accepts IP addresses and :PORT; refuses host names, unexpanded variables and bad ports", () => {
    const ok = (a: string) => Result.getOrThrow(parseAddress(a))
    expect(ok("10.0.0.5:8002")).toEqual({ host: "10.0.0.5", port: 8002 })
    expect(ok("fd00::1:8002")).toEqual({ host: "fd00::1", port: 8002 })
    expect(ok("[fd00::1]:8002")).toEqual({ host: "fd00::1", port: 8002 })
    expect(ok(":8002")).toEqual({ host: undefined, port: 8002 })
    const problem = (a: string) => {
      const r = parseAddress(a)
      return Result.isFailure(r) ? r.failure.message : "accepted"
    }
    expect(problem("localhost:8002")).toContain('"localhost" is not an IP address')
    // The DaemonSet's $(POD_IP) when the kubelet did not expand it.
    expect(problem("$(POD_IP):8002")).toContain("is not an IP address")
    expect(problem("8002")).toContain("expected HOST:PORT")
    expect(problem("10.0.0.5:99999")).toContain('invalid port "99999"')
    expect(problem("10.0.0.5:")).toContain('invalid port ""')
  })

  it("--health-address: loopback by default, a usage error for what it cannot bind", async () => {
    const flags = (...argv: string[]) =>
      Effect.runPromise(parseFlags(["--node-name", "n", ...argv], {}).pipe(Effect.result))
    const byDefault = await flags()
    expect(Result.isSuccess(byDefault) && byDefault.success.healthAddress).toBe("127.0.0.1:8002")
    const bad = await flags("--health-address", "localhost:8002")
    expect(Result.isFailure(bad) && bad.failure.message).toContain('"localhost" is not an IP address')
  })
})
