/**
 * Flapping, for a simulated hour on the TestClock: every default policy's condition flips between its unhealthy
 * status and healthy every 30 s, with a reason from the catalog, and the real decision core is asked each
 * simulated second (3,600 decisions per policy). A flap shorter than the toleration never repairs. The same
 * node held unhealthy past its toleration afterwards is repaired, and a flap longer than a (short) toleration
 * is repaired: the test can fail. Timings are the real ones (10m/30m); the wall-clock variant is
 * flapping.rtest.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import { type ControllerConfig, DEFAULT_POLICIES } from "../../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../../src/controller/PoolCounter.ts"
import { decideNow } from "../../src/decide/decide.ts"
import type { NodeView } from "../../src/domain/NodeView.ts"
import { cond, node } from "../fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const FLAP_MS = 30_000
const HOUR_S = 3600

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))

/** The node at `now` when its condition `type` flips between `bad` and its opposite every FLAP_MS from T0. */
const flapping = (type: string, bad: string, now: number): NodeView => {
  const flips = Math.floor((now - T0) / FLAP_MS)
  const status = flips % 2 === 0 ? bad : bad === "True" ? "False" : "True"
  return node("flappy", [cond(type, status, T0 + flips * FLAP_MS)], { pool: "p" })
}

const healthy = Array.from({ length: 9 }, (_, i) =>
  node(`ok-${i}`, [cond("Ready", "True", T0)], { pool: "p" })
)

/** Decisions for `at(now)` each simulated second for `seconds`; returns how many said Repair. */
const decideEverySecond = (c: ControllerConfig, at: (now: number) => NodeView, seconds: number) =>
  Effect.gen(function* () {
    let repairs = 0
    for (let s = 0; s < seconds; s++) {
      const now = T0 + s * 1000
      yield* TestClock.setTime(now)
      const n = at(now)
      const counter = makePoolCounter(c)
      for (const x of [n, ...healthy]) counter.upsert(x)
      const d = yield* decideNow({
        config: c,
        node: n,
        stats: counter.stats(),
        shifts: { _tag: "Known", shifts: [] }
      })
      if (d._tag === "Repair") repairs++
    }
    return repairs
  })

describe("flapping for a simulated hour (TestClock, default policies, real tolerations)", () => {
  for (const p of DEFAULT_POLICIES) {
    it.effect(`${p.conditionType}=${p.status} flipping every 30 s for an hour: 0 repairs`, () =>
      Effect.gen(function* () {
        const repairs = yield* decideEverySecond(
          config(),
          (now) => flapping(p.conditionType, p.status, now),
          HOUR_S
        )
        expect(repairs).toBe(0)
      })
    )
  }

  it.effect("held unhealthy past the toleration after the flapping hour: repaired", () =>
    Effect.gen(function* () {
      const c = config()
      const held = T0 + HOUR_S * 1000
      const repairs = yield* decideEverySecond(
        c,
        (now) =>
          now < held
            ? flapping("AcceleratedHardwareReady", "False", now)
            : node("flappy", [cond("AcceleratedHardwareReady", "False", held)], { pool: "p" }),
        HOUR_S + 11 * 60
      )
      expect(repairs).toBeGreaterThan(0)
    })
  )

  it.effect("a toleration shorter than the flap period: repaired within the hour", () =>
    Effect.gen(function* () {
      const c = config({
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 20 }]
      })
      const repairs = yield* decideEverySecond(c, (now) => flapping("KernelReady", "False", now), HOUR_S)
      expect(repairs).toBeGreaterThan(0)
    })
  )
})
