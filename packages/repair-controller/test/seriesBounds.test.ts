// Metric labels only from sets the controller knows (issue #37): a gauge series of a pool or zone that is gone is
// removed from what /metrics serves, and a reason a node wrote is labelled by the catalog or the config, or `other`.
import { Effect, Metric, Result } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { describe, expect, it } from "vitest"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { gaugeWith, makeGaugeSeries, metricReason, OTHER_REASON } from "../src/observability/seriesBounds.ts"

const config = Result.getOrThrow(
  decodeConfig({
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }],
    reasons: { MyOwnReason: { action: "Replace" } }
  })
)

/** Runs `f` against a registry of its own and returns what /metrics would serve then. */
const scrape = (f: Effect.Effect<void>) =>
  Effect.runSync(
    Effect.andThen(f, PrometheusMetrics.format({ prefix: "t" })).pipe(
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  )

describe("GaugeSeries", () => {
  it("removes every gauge of a value no longer written, keeps the others", () => {
    const a = Metric.gauge("size")
    const b = Metric.gauge("open")
    const series = makeGaugeSeries({ a, b }, (pool: string) => ({ pool }))
    const set = (_pool: string, g: { readonly a: Metric.Gauge<number>; readonly b: Metric.Gauge<number> }) =>
      Effect.andThen(Metric.update(g.a, 3), Metric.update(g.b, 1))
    const text = scrape(
      Effect.gen(function* () {
        yield* series.write(["p1", "p2"], set)
        yield* series.touch(["p3"], set)
        const gone = yield* series.write(["p2"], set)
        expect([...gone].sort()).toEqual(["p1", "p3"])
      })
    )
    expect(text).toContain('t_size{pool="p2"} 3')
    expect(text).toContain('t_open{pool="p2"} 1')
    expect(text).not.toContain('pool="p1"')
    expect(text).not.toContain('pool="p3"')
  })

  it("10,000 values written one after another leave one series per gauge", () => {
    const g = Metric.gauge("pool_nodes")
    const series = makeGaugeSeries({ g }, (pool: string) => ({ pool }))
    const text = scrape(
      Effect.gen(function* () {
        for (let i = 0; i < 10_000; i++)
          yield* series.write([`p${i}`], (_pool, gauges) => Metric.update(gauges.g, i))
      })
    )
    expect(text.split("\n").filter((l) => l.startsWith("t_pool_nodes{"))).toEqual([
      't_pool_nodes{pool="p9999"} 9999'
    ])
  })
})

describe("gaugeWith", () => {
  it("names the series withAttributes names: one series, written and removed by either", () => {
    const g = Metric.gauge("pool_size", { description: "nodes" })
    const text = scrape(
      Effect.gen(function* () {
        yield* Metric.update(Metric.withAttributes(g, { pool: "a", zone: "z" }), 1)
        yield* Metric.update(gaugeWith(g, { zone: "z", pool: "a" }), 2)
        yield* Metric.update(gaugeWith(g, { pool: "b" }), 3)
        yield* Metric.remove(Metric.withAttributes(g, { pool: "b" }))
      })
    )
    expect(text.split("\n").filter((l) => l.startsWith("t_pool_size{"))).toEqual([
      't_pool_size{pool="a",zone="z"} 2'
    ])
  })
})

describe("metricReason", () => {
  it("keeps catalog and configured reasons, bounds a template's numbers, and labels anything else other", () => {
    expect(metricReason(config, "NvidiaXID79Error")).toBe("NvidiaXID79Error")
    expect(metricReason(config, "NvidiaXID123456Error")).toBe("NvidiaXID{code}Error")
    expect(metricReason(config, "ForkFailedOutOfPIDs")).toBe("ForkFailedOutOfPIDs")
    expect(metricReason(config, "MyOwnReason")).toBe("MyOwnReason")
    // The controller's own reasons (a request's manual one, a planned repair's) are no node's text.
    expect(metricReason(config, "ManualRepairRequested")).toBe("ManualRepairRequested")
    expect(metricReason(config, "EC2InstanceRetirementScheduled")).toBe("EC2InstanceRetirementScheduled")
    expect(metricReason(config, "attacker-chosen-1")).toBe(OTHER_REASON)
    expect(metricReason(config, "")).toBe("")
  })
})
