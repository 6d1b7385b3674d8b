import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { allowedUnhealthy, breakerVerdict, CLUSTER_SCOPE } from "../src/decide/breaker.ts"
import { decideNow } from "../src/decide/decide.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { gateForRepair } from "../src/decide/zonalShiftGate.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { ShiftObservation } from "../src/decide/zonalShiftGate.ts"
import { cond, MIN, node } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const noShifts: ShiftObservation = { _tag: "Known", shifts: [] }
const T0 = Date.parse("2026-01-01T00:00:00Z")

/** The counts production keeps (PoolCounter), over `all`, with `repairing` held by the journal. */
const statsOf = (
  c: ControllerConfig,
  all: ReadonlyArray<NodeView>,
  repairing: ReadonlyArray<string> = []
) => {
  const counter = makePoolCounter(c)
  for (const n of all) counter.upsert(n)
  for (const name of repairing) counter.setRepair(name, { byLabel: true, failed: false })
  return counter.stats()
}

/** Decides for `n` among `all` at the TestClock's current time. */
const decideFor = (
  c: ControllerConfig,
  n: NodeView,
  all: ReadonlyArray<NodeView> = [n],
  shifts: ShiftObservation = noShifts,
  repairing: ReadonlyArray<string> = []
) => decideNow({ config: c, node: n, stats: statsOf(c, all, repairing), shifts })

const healthyPool = (pool: string, count: number) =>
  Array.from({ length: count }, (_, i) => node(`${pool}-ok-${i}`, [cond("Ready", "True", T0)], { pool }))

describe("toleration (TestClock, real 10m/30m values)", () => {
  it.effect("Ready=False waits 30m from lastTransitionTime, then expires", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const c = config()
      const n = node("n1", [cond("Ready", "False", T0)], { pool: "p" })
      const all = [n, ...healthyPool("p", 9)]
      const d0 = yield* decideFor(c, n, all)
      expect(d0._tag).toBe("Tolerating")
      if (d0._tag === "Tolerating") expect(d0.requeueAfterMs).toBe(30 * MIN)
      yield* TestClock.adjust("29 minutes")
      const d1 = yield* decideFor(c, n, all)
      expect(d1._tag === "Tolerating" && d1.requeueAfterMs).toBe(1 * MIN)
      yield* TestClock.adjust("1 minute")
      const d2 = yield* decideFor(c, n, all)
      expect(d2._tag).toBe("Repair")
      if (d2._tag === "Repair") expect(d2.governing.action).toBe("Replace")
    })
  )

  it.effect("a restart loses nothing: toleration is measured from lastTransitionTime, not first sight", () =>
    Effect.gen(function* () {
      // The condition went False 25 minutes before this controller ever saw it.
      yield* TestClock.setTime(T0 + 25 * MIN)
      const n = node("n1", [cond("Ready", "Unknown", T0, "NodeStatusUnknown")])
      const d = yield* decideFor(config(), n, [n, ...healthyPool("x", 9)])
      expect(d._tag === "Tolerating" && d.requeueAfterMs).toBe(5 * MIN)
    })
  )

  it.effect(
    "AcceleratedHardwareReady=False expires after 10m; earliest expiry among several matches wins",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 10 * MIN)
        const n = node("gpu", [
          cond("Ready", "False", T0 - 15 * MIN),
          cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID79Error")
        ])
        const d = yield* decideFor(config(), n, [n, ...healthyPool("g", 9)])
        expect(d._tag).toBe("Repair")
        if (d._tag === "Repair") {
          expect(d.governing.conditionType).toBe("AcceleratedHardwareReady")
          expect(d.governing.captureLogs).toBe(true)
        }
      })
  )

  it.effect("a condition cleared at 90% of toleration resets silently", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const c = config()
      yield* TestClock.adjust("27 minutes")
      const cleared = node("n1", [cond("Ready", "True", T0 + 27 * MIN)])
      expect((yield* decideFor(c, cleared))._tag).toBe("Healthy")
      // It fails again: a new lastTransitionTime, a new full toleration.
      yield* TestClock.adjust("10 minutes")
      const again = node("n1", [cond("Ready", "False", T0 + 37 * MIN)])
      const d = yield* decideFor(c, again, [again, ...healthyPool("x", 9)])
      expect(d._tag === "Tolerating" && d.requeueAfterMs).toBe(30 * MIN)
    })
  )

  it.effect("kubelet's pressure conditions never match", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 100 * MIN)
      const n = node("n1", [cond("DiskPressure", "True", T0), cond("MemoryPressure", "True", T0)])
      expect((yield* decideFor(config(), n))._tag).toBe("Healthy")
    })
  )
})

describe("reason-aware policy", () => {
  it.effect(
    "catalog per-XID actions (NVIDIA's catalog, reason-codes 2.0.0): XID 48 and XID 79 reboot, XID 54 replaces",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 11 * MIN)
        const c = config()
        const pool = healthyPool("g", 9)
        const x48 = node("a", [cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID48Error")])
        const x79 = node("b", [cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID79Error")])
        const d48 = yield* decideFor(c, x48, [x48, ...pool])
        const d79 = yield* decideFor(c, x79, [x79, ...pool])
        expect(d48._tag === "Repair" && d48.governing.action).toBe("Reboot")
        expect(d79._tag === "Repair" && d79.governing.action).toBe("Reboot")
        const x54 = node("c", [cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID54Error")])
        const d54 = yield* decideFor(c, x54, [x54, ...pool])
        expect(d54._tag === "Repair" && d54.governing.action).toBe("Replace")
      })
  )

  it.effect("per-reason override (exact, then template) beats the policy and the catalog", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 2 * MIN)
      const c = config({
        reasons: {
          NvidiaXID48Error: {
            action: "Replace",
            tolerationSeconds: 60,
            drainMode: "wait",
            drainDeadlineSeconds: 30
          },
          "NvidiaXID{code}Error": { action: "None" }
        }
      })
      const pool = healthyPool("g", 9)
      const x48 = node("a", [cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID48Error")])
      const d = yield* decideFor(c, x48, [x48, ...pool])
      expect(d._tag).toBe("Repair")
      if (d._tag === "Repair")
        expect(d.governing).toMatchObject({
          action: "Replace",
          actionSource: "reason-override",
          drainMode: "wait",
          drainDeadlineMs: 30_000
        })
      yield* TestClock.adjust("20 minutes")
      const x79 = node("b", [cond("AcceleratedHardwareReady", "False", T0, "NvidiaXID79Error")])
      expect((yield* decideFor(c, x79, [x79, ...pool]))._tag).toBe("ReportOnly")
    })
  )

  it.effect("a report-only match never hides an actionable one", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config({
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 1, action: "None" }]
      })
      const n = node("n", [cond("KernelReady", "False", T0), cond("Ready", "False", T0)])
      const d = yield* decideFor(c, n, [n, ...healthyPool("x", 9)])
      expect(d._tag === "Repair" && d.governing.conditionType).toBe("Ready")
    })
  )
})

describe("breaker", () => {
  it("allowed = ceil(percent x size)", () => {
    expect([1, 5, 6, 10, 11, 100].map((n) => allowedUnhealthy(20, n))).toEqual([1, 1, 2, 2, 3, 20])
  })

  it.effect("3 of 10 unhealthy in a pool: none repaired; 2 of 10: both repaired", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config()
      const bad = (i: number) => node(`bad-${i}`, [cond("Ready", "False", T0)], { pool: "p" })
      const three = [bad(0), bad(1), bad(2), ...healthyPool("p", 7)]
      for (const n of three.slice(0, 3)) {
        const d = yield* decideFor(c, n, three)
        expect(d._tag).toBe("Blocked")
        if (d._tag === "Blocked") {
          expect(d.breaker).toMatchObject({ scope: "p", size: 10, unhealthy: 3, allowed: 2, open: true })
          expect(d.requeueAfterMs).toBe(5 * MIN)
        }
      }
      const two = [bad(0), bad(1), ...healthyPool("p", 8)]
      for (const n of two.slice(0, 2)) expect((yield* decideFor(c, n, two))._tag).toBe("Repair")
    })
  )

  it.effect("unhealthy counts not-yet-expired matches and nodes the journal holds a repair of", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config()
      const expired = node("e", [cond("Ready", "False", T0)], { pool: "p" })
      const fresh = node("f", [cond("Ready", "False", T0 + 30 * MIN)], { pool: "p" })
      const repairing = node("r", [cond("Ready", "True", T0)], { pool: "p" })
      const all = [expired, fresh, repairing, ...healthyPool("p", 7)]
      expect((yield* decideFor(c, expired, all, noShifts, ["r"]))._tag).toBe("Blocked")
      expect((yield* decideFor(c, expired, all))._tag).toBe("Repair")
    })
  )

  it.effect("attack: a repair annotation a node writes on itself is not a repair (counts nothing)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config()
      const expired = node("e", [cond("Ready", "False", T0)], { pool: "p" })
      const forged = (i: number) =>
        node(`x${i}`, [cond("Ready", "True", T0)], {
          pool: "p",
          annotations: { "nodemend.io/repair": '{"phase":"Terminating"}' }
        })
      const all = [expired, forged(0), forged(1), ...healthyPool("p", 7)]
      expect((yield* decideFor(c, expired, all))._tag).toBe("Repair")
    })
  )

  it.effect("percent per pool; pools are independent; no label -> cluster scope", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config({ pools: { big: { maxUnhealthyPercent: 50 } } })
      const badBig = [0, 1, 2, 3, 4].map((i) => node(`b${i}`, [cond("Ready", "False", T0)], { pool: "big" }))
      const badSmall = [0, 1, 2].map((i) => node(`s${i}`, [cond("Ready", "False", T0)], { pool: "small" }))
      const all = [...badBig, ...healthyPool("big", 5), ...badSmall, ...healthyPool("small", 7)]
      expect((yield* decideFor(c, badBig[0]!, all))._tag).toBe("Repair")
      expect((yield* decideFor(c, badSmall[0]!, all))._tag).toBe("Blocked")
      const loose = node("loose", [cond("Ready", "False", T0)])
      const v = breakerVerdict(c, statsOf(c, [...all, loose]), undefined)
      expect(v).toMatchObject({ scope: CLUSTER_SCOPE, size: 21, unhealthy: 9, allowed: 5, open: true })
    })
  )
})

describe("zonal-shift gate", () => {
  const shift = (zone: string, expiresAt: number) => ({
    kind: "zonal-shift" as const,
    zone,
    expiresAt: new Date(expiresAt)
  })

  it("a repair under way is held before termination by a shift that began after it started (zone: the cloud's)", () => {
    const c = config({ zonalShift: { scope: "zone" } })
    const match = { conditionType: "Ready", status: "False", reason: "R", action: "Replace" } as PolicyMatch
    const r = newRepairRecord(
      {
        id: "r",
        match,
        node: {
          name: "n",
          uid: "u",
          providerID: "p",
          // The node's label says zone a; the cloud put its instance in zone c.
          labels: { "topology.kubernetes.io/zone": "a" },
          instance: {
            instanceId: "i",
            state: "running",
            zone: "c",
            launch: {},
            owner: { kind: "standalone" }
          }
        }
      },
      T0
    )
    const now = T0 + MIN
    const known = (zone: string): ShiftObservation => ({
      _tag: "Known",
      shifts: [shift(zone, now + 60 * MIN)]
    })
    expect(gateForRepair(c, known("c"), r, now)._tag).toBe("StandDown")
    expect(gateForRepair(c, known("a"), r, now)._tag).toBe("Open")
    expect(gateForRepair(c, { _tag: "Unknown", error: "ARC down" }, r, now)._tag).toBe("StandDown")
  })

  it.effect("an active shift stands repairs down cluster-wide; an expired one does not", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config()
      const n = node("n", [cond("Ready", "False", T0)], { labels: { "topology.kubernetes.io/zone": "a" } })
      const all = [n, ...healthyPool("x", 9)]
      const on = yield* decideFor(c, n, all, { _tag: "Known", shifts: [shift("b", T0 + 60 * MIN)] })
      expect(on._tag === "StandDown" && on.gate.cause).toBe("shift")
      const off = yield* decideFor(c, n, all, { _tag: "Known", shifts: [shift("b", T0 + 30 * MIN)] })
      expect(off._tag).toBe("Repair")
    })
  )

  it.effect("zone scope stands down only the shifted zone", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const c = config({ zonalShift: { scope: "zone" } })
      const inA = node("a", [cond("Ready", "False", T0)], { labels: { "topology.kubernetes.io/zone": "a" } })
      const inB = node("b", [cond("Ready", "False", T0)], { labels: { "topology.kubernetes.io/zone": "b" } })
      const obs: ShiftObservation = { _tag: "Known", shifts: [shift("a", T0 + 60 * MIN)] }
      const all = [inA, inB, ...healthyPool("x", 8)]
      expect((yield* decideFor(c, inA, all, obs))._tag).toBe("StandDown")
      expect((yield* decideFor(c, inB, all, obs))._tag).toBe("Repair")
    })
  )

  it.effect("provider cannot answer: fail closed by default, proceed when configured", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 31 * MIN)
      const n = node("n", [cond("Ready", "False", T0)])
      const all = [n, ...healthyPool("x", 9)]
      const unknown: ShiftObservation = { _tag: "Unknown", error: "throttled" }
      const closed = yield* decideFor(config(), n, all, unknown)
      expect(closed._tag === "StandDown" && closed.gate.cause).toBe("unknown")
      expect((yield* decideFor(config({ zonalShift: { onUnknown: "proceed" } }), n, all, unknown))._tag).toBe(
        "Repair"
      )
    })
  )
})

describe("veto and dry-run", () => {
  it.effect(
    "do-not-repair annotation, pool list, pool flag and global pause veto; dry-run would repair",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 31 * MIN)
        const bad = (name: string, pool: string, annotations: Record<string, string> = {}) =>
          node(name, [cond("Ready", "False", T0)], { pool, annotations })
        const ann = bad("a", "p", { "nodemend.io/do-not-repair": "true" })
        const inList = bad("b", "frozen")
        const flagged = bad("c", "flagged")
        const all = [
          ann,
          inList,
          flagged,
          ...healthyPool("p", 9),
          ...healthyPool("frozen", 9),
          ...healthyPool("flagged", 9)
        ]
        const c = config({ doNotRepairPools: ["frozen"], pools: { flagged: { doNotRepair: true } } })
        const veto = (d: { _tag: string; veto?: string }) => (d._tag === "Vetoed" ? d.veto : d._tag)
        expect(veto(yield* decideFor(c, ann, all))).toBe("node-annotation")
        expect(veto(yield* decideFor(c, inList, all))).toBe("pool")
        expect(veto(yield* decideFor(c, flagged, all))).toBe("pool")
        expect(veto(yield* decideFor(config({ paused: true }), bad("d", "p"), all))).toBe("paused")
        expect((yield* decideFor(config({ dryRun: true }), bad("e", "p"), all))._tag).toBe("WouldRepair")
      })
  )
})
