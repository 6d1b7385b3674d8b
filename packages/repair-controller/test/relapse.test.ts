// Relapse (#28 part 1): repairs whose replacements (or fresh nodes of the pool) come back with the same condition
// and reason hold new repairs of that reason in that pool, until released or quiet. Pure: decide/relapse.ts and
// its place in decide(); no cluster, TestClock for time.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decideNow } from "../src/decide/decide.ts"
import {
  countingRelapses,
  emptyLedger,
  evidenceText,
  holdVerdict,
  keepsLedger,
  ledgerRepairOf,
  liftsByItself,
  observe,
  recordRepair,
  relapsePolicy,
  relapseSetbacks,
  released,
  type Sighting,
  sightingsOf,
  worthObserving
} from "../src/decide/relapse.ts"
import {
  type LedgerRepair,
  ledgerConfigMapName,
  parseLedger,
  type RelapseLedger,
  serializeLedger
} from "../src/domain/RelapseLedger.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { cond, MIN, node } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const T0 = Date.parse("2026-01-01T00:00:00Z")
const REASON = "ForkFailedOutOfPIDs"

const repair = (i: number, finishedAt: number, over: Partial<LedgerRepair> = {}): LedgerRepair => ({
  id: `r${i}`,
  node: `n${i}`,
  action: "Replace",
  replacement: `n${i}-r`,
  startedAt: finishedAt - 5 * MIN,
  finishedAt,
  ...over
})

const sighting = (name: string, createdAt: number, since: number): Sighting => ({
  node: name,
  uid: `uid-${name}`,
  createdAt,
  since
})

/** A ledger with `n` repairs ended at T0, T0+1m, ... */
const ledgerWith = (n: number, c = config()): RelapseLedger => {
  const policy = relapsePolicy(c, "p", REASON)
  let l = emptyLedger("p", REASON, "KernelReady")
  for (let i = 0; i < n; i++) l = recordRepair(l, repair(i, T0 + i * MIN), policy, T0 + i * MIN)
  return l
}

describe("relapse policy (config)", () => {
  it("is on by default with conservative values: 3 relapses within 1 h hold, 6 h quiet lifts", () => {
    expect(relapsePolicy(config(), "p", REASON)).toEqual({
      enabled: true,
      windowMs: 3600_000,
      threshold: 3,
      quietMs: 6 * 3600_000
    })
  })

  it("pool+reason > pool > reason (exact or catalog template) > global", () => {
    const c = config({
      relapse: {
        threshold: 4,
        reasons: { "NvidiaXID{code}Error": { threshold: 2 }, [REASON]: { windowSeconds: 60 } }
      },
      pools: { gpu: { relapse: { quietSeconds: 10, reasons: { NvidiaXID79Error: { enabled: false } } } } }
    })
    expect(relapsePolicy(c, "other", "NvidiaXID48Error").threshold).toBe(2)
    expect(relapsePolicy(c, "other", REASON)).toMatchObject({ threshold: 4, windowMs: 60_000 })
    expect(relapsePolicy(c, "gpu", "NvidiaXID48Error")).toMatchObject({ threshold: 2, quietMs: 10_000 })
    expect(relapsePolicy(c, "gpu", "NvidiaXID79Error").enabled).toBe(false)
    expect(relapsePolicy(c, undefined, "X").threshold).toBe(4)
  })

  it.each([
    [{ relapse: { threshold: 0 } }, "relapse.threshold"],
    [{ relapse: { threshold: 2.5 } }, "relapse.threshold"],
    [{ relapse: { windowSeconds: 0 } }, "relapse.windowSeconds"],
    [{ relapse: { quietSeconds: -1 } }, "relapse.quietSeconds"],
    [{ relapse: { windowMinutes: 5 } }, "relapse.windowMinutes"],
    [
      { relapse: { reasons: { "NvidiaXID{code}Eror": { threshold: 2 } } } },
      "relapse.reasons.NvidiaXID{code}Eror"
    ],
    [{ pools: { gpu: { relapse: { thresold: 2 } } } }, "pools.gpu.relapse.thresold"],
    [{ zoneBreaker: { maxUnhealthyPercent: 120 } }, "zoneBreaker.maxUnhealthyPercent"],
    [{ zoneBreaker: { minUnhealthyNodes: 0 } }, "zoneBreaker.minUnhealthyNodes"],
    [{ zoneBreaker: { onUnknownZone: "maybe" } }, "zoneBreaker.onUnknownZone"]
  ])("rejects %j naming %s", (raw, field) => {
    const r = decodeConfig(raw, "c.yaml")
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) expect(r.failure.message).toContain(`${field}: `)
  })
})

describe("relapse detection (pure)", () => {
  const policy = relapsePolicy(config(), "p", REASON)

  it("a replacement with the same condition within the window is a relapse, measured from its arrival", () => {
    const l = ledgerWith(1)
    const o = observe(l, sighting("n0-r", T0 - MIN, T0 + 2 * MIN), policy, T0 + 2 * MIN)
    expect(o.relapse).toMatchObject({ node: "n0-r", repairId: "r0", kind: "replacement", afterMs: 3 * MIN })
    expect(o.engaged).toBeUndefined()
  })

  it("a replacement known only by its instance id (the AWS owners) is matched by its providerID", () => {
    let l = emptyLedger("p", REASON, "KernelReady")
    l = recordRepair(
      l,
      repair(0, T0, { replacement: undefined, replacementInstance: "i-0abc" } as never),
      policy,
      T0
    )
    const s = { ...sighting("ip-10-0-0-1", T0 - MIN, T0 + MIN), providerID: "aws:///us-west-2a/i-0abc" }
    expect(observe(l, s, policy, T0 + MIN).relapse?.kind).toBe("replacement")
  })

  it("a fresh node of the pool (created after the repair started) counts; an older node does not", () => {
    const l = ledgerWith(1)
    expect(observe(l, sighting("other", T0 - MIN, T0 + MIN), policy, T0 + MIN).relapse?.kind).toBe("fresh")
    expect(observe(l, sighting("old", T0 - 60 * MIN, T0 + MIN), policy, T0 + MIN).relapse).toBeUndefined()
  })

  it("the same condition after the window, or before the repair started, is no relapse", () => {
    const l = ledgerWith(1)
    expect(observe(l, sighting("n0-r", T0, T0 + 61 * MIN), policy, T0 + 61 * MIN).relapse).toBeUndefined()
    expect(observe(l, sighting("n0-r", T0, T0 - 6 * MIN), policy, T0).relapse).toBeUndefined()
  })

  it("a replacement that fails within the second its repair started counts (timestamps are whole seconds)", () => {
    const l = ledgerWith(1)
    const started = T0 - 5 * MIN
    const o = observe(l, sighting("n0-r", started - 400, started - 400), policy, T0)
    expect(o.relapse?.kind).toBe("replacement")
  })

  it("a rebooted node whose condition comes back after the repair ended relapses on itself", () => {
    let l = emptyLedger("p", REASON, "KernelReady")
    l = recordRepair(l, repair(0, T0, { action: "Reboot", replacement: undefined } as never), policy, T0)
    const o = observe(l, { node: "n0", uid: "u", since: T0 + MIN }, policy, T0 + MIN)
    expect(o.relapse).toMatchObject({ kind: "same-node", afterMs: MIN })
  })

  it("a node relapses once, however often it is seen", () => {
    const l1 = observe(ledgerWith(1), sighting("n0-r", T0, T0 + MIN), policy, T0 + MIN).ledger
    expect(observe(l1, sighting("n0-r", T0, T0 + MIN), policy, T0 + 2 * MIN).relapse).toBeUndefined()
  })

  it("a node re-created or re-registered under its name (a new uid) relapses once; a new name counts", () => {
    const l1 = observe(ledgerWith(2), sighting("n0-r", T0, T0 + MIN), policy, T0 + MIN).ledger
    // Deleted and re-created by its kubelet: a new uid and creationTimestamp, so it would read as a fresh node.
    const again = { node: "n0-r", uid: "uid-n0-r-2", createdAt: T0 + 2 * MIN, since: T0 + 3 * MIN }
    expect(observe(l1, again, policy, T0 + 3 * MIN).relapse).toBeUndefined()
    expect(observe(l1, { ...again, uid: undefined }, policy, T0 + 3 * MIN).relapse).toBeUndefined()
    expect(observe(l1, { ...again, node: "n1-r" }, policy, T0 + 3 * MIN).relapse?.kind).toBe("replacement")
  })

  it("threshold 2: one node re-created under its name never holds; a second name does", () => {
    const p2 = relapsePolicy(config({ relapse: { threshold: 2 } }), "p", REASON)
    let l = ledgerWith(2)
    for (let i = 0; i < 5; i++) {
      const o = observe(
        l,
        { node: "n0-r", uid: `u${i}`, createdAt: T0 + i * MIN, since: T0 + i * MIN + 1000 },
        p2,
        T0 + 6 * MIN
      )
      l = o.ledger
      expect(o.engaged).toBeUndefined()
    }
    expect(countingRelapses(l, p2, T0 + 6 * MIN)).toHaveLength(1)
    expect(observe(l, sighting("n1-r", T0, T0 + 6 * MIN), p2, T0 + 6 * MIN).engaged).toBeDefined()
  })

  it("the threshold-th relapse engages the hold, with the evidence: which repairs, which nodes, how fast", () => {
    let l = ledgerWith(3)
    const outs = [0, 1, 2].map((i) => {
      const o = observe(l, sighting(`n${i}-r`, T0 + i * MIN, T0 + i * MIN + 30_000), policy, T0 + 3 * MIN)
      l = o.ledger
      return o
    })
    expect(outs.map((o) => o.engaged !== undefined)).toEqual([false, false, true])
    expect(l.hold?.evidence.map((r) => r.repairId)).toEqual(["r0", "r1", "r2"])
    const text = evidenceText(l.hold?.evidence ?? [])
    expect(text).toContain("replacement n2-r of n2 relapsed 30s after it came up (repair r2)")
    const v = holdVerdict(l, policy, T0 + 4 * MIN)
    expect(v._tag).toBe("Held")
  })

  it("a quiet period without relapse lifts the hold; a release starts the ledger over", () => {
    let l = ledgerWith(3)
    for (const i of [0, 1, 2])
      l = observe(l, sighting(`n${i}-r`, T0, T0 + 3 * MIN), policy, T0 + 3 * MIN).ledger
    const since = l.hold?.since ?? 0
    expect(holdVerdict(l, policy, since + policy.quietMs - 1)._tag).toBe("Held")
    expect(holdVerdict(l, policy, since + policy.quietMs)._tag).toBe("Clear")
    const fresh = released(l)
    expect(fresh.hold).toBeUndefined()
    expect(fresh.relapses).toEqual([])
    expect(fresh.repairs).toEqual([])
  })

  it("the store's pure parts (shared with the what-if replay): the repair kept, the sightings, the quiet lift, the backoff", () => {
    expect(
      ledgerRepairOf({
        id: "x",
        node: "a",
        action: "Reboot",
        escalated: true,
        replacementNode: "b",
        replacementInstance: undefined,
        startedAt: T0,
        finishedAt: T0 + MIN
      })
    ).toEqual({
      id: "x",
      node: "a",
      action: "Replace",
      replacement: "b",
      startedAt: T0,
      finishedAt: T0 + MIN
    })
    expect(keepsLedger("", policy)).toBe(false)
    expect(keepsLedger(REASON, policy)).toBe(true)
    expect(keepsLedger(REASON, { ...policy, enabled: false })).toBe(false)
    const n = node("n0-r", [cond("KernelReady", "False", T0 + MIN, REASON)])
    const matches = [
      { conditionType: "KernelReady", reason: REASON, lastTransitionTime: T0 + MIN },
      { conditionType: "Ready", reason: "", lastTransitionTime: T0 },
      { conditionType: "DiskReady", reason: "X", lastTransitionTime: undefined }
    ] as unknown as Parameters<typeof sightingsOf>[1]
    expect(sightingsOf(n, matches).map((x) => [x.match.conditionType, x.sighting.since])).toEqual([
      ["KernelReady", T0 + MIN]
    ])
    expect(worthObserving(undefined)).toBe(false)
    expect(worthObserving(emptyLedger("p", REASON, "KernelReady"))).toBe(false)
    expect(worthObserving(ledgerWith(1))).toBe(true)
    let l = ledgerWith(3)
    for (const i of [0, 1, 2])
      l = observe(l, sighting(`n${i}-r`, T0, T0 + 3 * MIN), policy, T0 + 3 * MIN).ledger
    expect(relapseSetbacks(l, policy, T0 + 3 * MIN)).toBe(3)
    expect(relapseSetbacks(undefined, policy, T0)).toBe(0)
    const since = l.hold?.since ?? 0
    expect(liftsByItself(l, policy, since + policy.quietMs - 1)).toBe(false)
    expect(liftsByItself(l, policy, since + policy.quietMs)).toBe(true)
    expect(liftsByItself(ledgerWith(1), policy, T0 + 100 * 60 * MIN)).toBe(false)
  })

  it("a disabled policy neither records nor holds", () => {
    const off = relapsePolicy(config({ relapse: { enabled: false } }), "p", REASON)
    expect(observe(ledgerWith(1), sighting("n0-r", T0, T0 + MIN), off, T0 + MIN).relapse).toBeUndefined()
  })

  it("property: the hold engages exactly when threshold distinct nodes relapse within the window", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 20 }),
        (threshold, order) => {
          const p = relapsePolicy(config({ relapse: { threshold } }), "p", REASON)
          let l = emptyLedger("p", REASON, "KernelReady")
          for (let i = 0; i < 10; i++) l = recordRepair(l, repair(i, T0), p, T0)
          let engagedAt: number | undefined
          const distinct = new Set<number>()
          for (const i of order) {
            const o = observe(l, sighting(`n${i}-r`, T0, T0 + MIN), p, T0 + MIN)
            l = o.ledger
            distinct.add(i)
            if (o.engaged !== undefined) {
              expect(engagedAt).toBeUndefined()
              engagedAt = distinct.size
            }
          }
          expect(l.relapses.length).toBe(distinct.size)
          expect(countingRelapses(l, p, T0 + MIN).length).toBe(distinct.size)
          if (distinct.size >= threshold) expect(engagedAt).toBe(threshold)
          else expect(l.hold).toBeUndefined()
        }
      )
    )
  })

  it("the ledger survives the journal: serialize, parse; a bad one is refused", () => {
    let l = ledgerWith(3)
    for (const i of [0, 1, 2]) l = observe(l, sighting(`n${i}-r`, T0, T0 + MIN), policy, T0 + MIN).ledger
    expect(Result.getOrThrow(parseLedger(serializeLedger(l)))).toEqual(l)
    expect(Result.isFailure(parseLedger('{"v":1}'))).toBe(true)
  })

  it("a ledger written when relapses counted per (name, uid) reads back with one relapse per name, its hold kept", () => {
    const relapse = (node: string, uid: string, at: number) => ({
      node,
      uid,
      repairId: "r0",
      repairedNode: "n0",
      kind: "fresh",
      at,
      afterMs: 1000
    })
    // n0-r re-created twice under its name: three relapses under the old count, one node.
    const old = [relapse("n0-r", "a", T0), relapse("n0-r", "b", T0 + MIN), relapse("n1-r", "c", T0 + 2 * MIN)]
    const text = JSON.stringify({
      v: 1,
      pool: "p",
      reason: REASON,
      conditionType: "KernelReady",
      repairs: [repair(0, T0 - MIN)],
      relapses: [...old, relapse("n0-r", "d", T0 + 3 * MIN)],
      hold: { since: T0 + 2 * MIN, evidence: old, threshold: 3, windowMs: 3600_000 }
    })
    const l = Result.getOrThrow(parseLedger(text))
    expect(l.relapses.map((r) => [r.node, r.uid])).toEqual([
      ["n0-r", "a"],
      ["n1-r", "c"]
    ])
    expect(l.hold?.evidence.map((r) => r.node)).toEqual(["n0-r", "n1-r"])
    expect(countingRelapses(l, policy, T0 + 3 * MIN)).toHaveLength(2)
    // The hold it engaged stays until its quiet period or a release (fail closed).
    expect(holdVerdict(l, policy, T0 + 4 * MIN)._tag).toBe("Held")
    expect(Result.getOrThrow(parseLedger(serializeLedger(l)))).toEqual(l)
  })

  it("ConfigMap names are valid and unique per pool and reason", () => {
    const a = ledgerConfigMapName("gpu-h100", "NvidiaXID79Error")
    expect(a).toMatch(/^nodemend-relapse-gpu-h100-nvidiaxid79error-[0-9a-f]{8}$/)
    expect(ledgerConfigMapName("<cluster>", "X")).toMatch(/^nodemend-relapse-cluster-x-/)
    expect(ledgerConfigMapName("a_b", "X")).not.toBe(ledgerConfigMapName("a.b", "X"))
  })
})

describe("decide: a held pool and reason", () => {
  const statsOf = (c: ControllerConfig, all: ReadonlyArray<NodeView>) => {
    const counter = makePoolCounter(c)
    for (const n of all) counter.upsert(n)
    return counter.stats()
  }
  const c = config({ policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }] })
  const bad = (name: string, reason = REASON) =>
    node(name, [cond("KernelReady", "False", T0, reason)], { pool: "p" })
  const healthy = Array.from({ length: 20 }, (_, i) =>
    node(`ok${i}`, [cond("Ready", "True", T0)], { pool: "p" })
  )
  let held = ledgerWith(3)
  const policy = relapsePolicy(c, "p", REASON)
  for (const i of [0, 1, 2]) held = observe(held, sighting(`n${i}-r`, T0, T0 + MIN), policy, T0 + MIN).ledger

  it.effect(
    "holds a due repair of that reason in that pool (after veto and stand-downs, before the breaker)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0 + 2 * MIN)
        const n = bad("x")
        const d = yield* decideNow({
          config: c,
          node: n,
          stats: statsOf(c, [n, ...healthy]),
          shifts: { _tag: "Known", shifts: [] },
          ledger: (scope, reason) => (scope === "p" && reason === REASON ? held : undefined)
        })
        expect(d._tag).toBe("Held")
        if (d._tag === "Held") {
          expect(d.held.relapses).toHaveLength(3)
          expect(d.requeueAfterMs).toBeGreaterThan(0)
        }
      })
  )

  it.effect("another reason in the same pool is repaired", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 2 * MIN)
      const n = bad("y", "NotInTheCatalog")
      const d = yield* decideNow({
        config: c,
        node: n,
        stats: statsOf(c, [n, ...healthy]),
        shifts: { _tag: "Known", shifts: [] },
        ledger: (scope, reason) => (scope === "p" && reason === REASON ? held : undefined)
      })
      expect(d._tag).toBe("Repair")
    })
  )

  it.effect("after the quiet period the same node is repaired", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime((held.hold?.since ?? 0) + policy.quietMs)
      const n = bad("x")
      const d = yield* decideNow({
        config: c,
        node: n,
        stats: statsOf(c, [n, ...healthy]),
        shifts: { _tag: "Known", shifts: [] },
        ledger: () => held
      })
      expect(d._tag).toBe("Repair")
    })
  )
})
