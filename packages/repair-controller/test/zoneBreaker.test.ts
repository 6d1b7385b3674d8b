// The failure-domain breaker (#28 part 2): unhealthy nodes concentrated in one zone, across pools, while the
// other zones are healthy stand that zone's repairs down (fail closed for nodes without a zone). Pure.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { TestClock } from "effect/testing"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decideNow } from "../src/decide/decide.ts"
import { stoodDownZones, type ZoneCount, zoneText, zoneVerdict } from "../src/decide/zoneBreaker.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { cond, MIN, node } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const T0 = Date.parse("2026-01-01T00:00:00Z")
const zones = (o: Record<string, [number, number]>): Map<string, ZoneCount> =>
  new Map(Object.entries(o).map(([z, [size, unhealthy]]) => [z, { size, unhealthy }]))
const inZone = (name: string, zone: string | undefined, unhealthy: boolean, pool = "p") =>
  node(
    name,
    [
      unhealthy
        ? cond("KernelReady", "False", T0 - 60 * MIN, "ForkFailedOutOfPIDs")
        : cond("Ready", "True", T0)
    ],
    { pool, labels: zone === undefined ? {} : { [ZONE_LABEL]: zone } }
  )

describe("which zones stand down", () => {
  const c = config()

  it("on by default: one zone over 20% with >= 3 unhealthy while the others are at or under it", () => {
    expect(stoodDownZones(c, zones({ a: [10, 4], b: [10, 0], c: [10, 1] })).map((d) => d.zone.zone)).toEqual([
      "a"
    ])
  })

  it("not when another zone crosses too (a fleet-wide problem is the pool breakers' to judge)", () => {
    expect(stoodDownZones(c, zones({ a: [10, 4], b: [10, 3], c: [10, 0] }))).toEqual([])
  })

  it("not with one zone only, below minUnhealthyNodes, or disabled", () => {
    expect(stoodDownZones(c, zones({ a: [10, 9] }))).toEqual([])
    expect(stoodDownZones(c, zones({ a: [4, 2], b: [10, 0] }))).toEqual([])
    expect(
      stoodDownZones(config({ zoneBreaker: { enabled: false } }), zones({ a: [10, 9], b: [10, 0] }))
    ).toEqual([])
  })

  it("the figures, for the Event", () => {
    const v = zoneVerdict(c, zones({ a: [10, 4], b: [8, 0] }), "a")
    expect(v._tag).toBe("StandDown")
    if (v._tag === "StandDown")
      expect(zoneText(v)).toBe(
        "zone a has 4 of 10 nodes unhealthy (40%, over 20%) while b has 0 of 8 (0%): the zone, not the nodes, looks at fault; repairs in it stand down"
      )
  })

  it("fail closed: a node without a zone label stands down while a zone does; proceed when told", () => {
    const z = zones({ a: [10, 4], b: [10, 0] })
    expect(zoneVerdict(c, z, undefined)).toMatchObject({ cause: "unknown-zone" })
    expect(zoneVerdict(c, z, "b")._tag).toBe("Open")
    expect(zoneVerdict(config({ zoneBreaker: { onUnknownZone: "proceed" } }), z, undefined)._tag).toBe("Open")
  })

  it("property: at most one zone stands down, it is over the threshold and every other zone is not", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom("a", "b", "c", "d"),
          fc
            .integer({ min: 1, max: 50 })
            .chain((size) => fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size })))
        ),
        fc.integer({ min: 0, max: 100 }),
        (raw, percent) => {
          const cfg = config({ zoneBreaker: { maxUnhealthyPercent: percent } })
          const down = stoodDownZones(cfg, zones(raw))
          expect(down.length).toBeLessThanOrEqual(1)
          for (const d of down) {
            expect(d.zone.percent).toBeGreaterThan(percent)
            expect(d.zone.unhealthy).toBeGreaterThanOrEqual(3)
            for (const o of d.others) expect(o.percent).toBeLessThanOrEqual(percent)
          }
        }
      )
    )
  })
})

describe("decide with faults spread over zones (PoolCounter's zone counts, across pools)", () => {
  const c = config({
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }],
    maxUnhealthyPercent: 100,
    maxInFlight: "100%"
  })
  const fleet = (badA: number, badB: number): NodeView[] => [
    // zone a: two pools, 5 nodes each; zone b: 10 nodes of pool p
    ...Array.from({ length: 10 }, (_, i) => inZone(`a${i}`, "a", i < badA, i % 2 === 0 ? "p" : "q")),
    ...Array.from({ length: 10 }, (_, i) => inZone(`b${i}`, "b", i < badB))
  ]
  const decideIn = (all: NodeView[], name: string) => {
    const counter = makePoolCounter(c)
    for (const n of all) counter.upsert(n)
    return decideNow({
      config: c,
      node: all.find((n) => n.name === name)!,
      stats: counter.stats(),
      shifts: { _tag: "Known", shifts: [] }
    })
  }

  it.effect("4 of 10 unhealthy in zone a (over two pools), 0 in b: zone a stands down, b repairs", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const all = [...fleet(4, 0), inZone("b-bad", "b", true)]
      const a = yield* decideIn(all, "a0")
      expect(a._tag).toBe("ZoneStandDown")
      expect((yield* decideIn(all, "b-bad"))._tag).toBe("Repair")
    })
  )

  it.effect("spread evenly (3 in a, 3 in b): no zone stands down", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      expect((yield* decideIn(fleet(3, 3), "a0"))._tag).toBe("Repair")
    })
  )

  it.effect("a node whose repair is in flight keeps counting in its zone", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const all = fleet(3, 0)
      const counter = makePoolCounter(c)
      for (const n of all) counter.upsert(n)
      // a3 healthy by its conditions, but under repair: 4 of 10 in zone a
      counter.setRepair("a3", { pool: "q", failed: false })
      const d = yield* decideNow({
        config: c,
        node: all[0]!,
        stats: counter.stats(),
        shifts: { _tag: "Known", shifts: [] }
      })
      expect(d._tag).toBe("ZoneStandDown")
    })
  )
})
