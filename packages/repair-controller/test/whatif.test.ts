import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import type { Decision } from "../src/decide/decide.ts"
import { type HistoryLine, historyLine, isoTime, parseHistory } from "../src/whatif/history.ts"
import { replay } from "../src/whatif/replay.ts"
import { holdOf, type ReplayOptions } from "../src/whatif/result.ts"
import { compare, resultJson, summarize } from "../src/whatif/summary.ts"
import { MIN } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
/** The controller run over a recording (whatif/replay.ts). */
const run = (c: ControllerConfig, events: Parameters<typeof replay>[1], options?: ReplayOptions) =>
  Effect.runPromise(replay(c, events, options))
const T0 = Date.parse("2026-11-23T00:00:00Z")
const at = (min: number) => isoTime(T0 + min * MIN)
/**
 * A time as whole minutes after T0: the controller acts a second or two after an instant where the old model
 * acted at it (a replacement's Node is placed by the fleet inventory's next batch before the pool's next decision).
 */
const m = (t: number) => Math.round((t - T0) / MIN)

/** A history: `size` healthy nodes n0.. of `pool` at T0, then `lines`, then an end mark at `endMin`. */
const history = (size: number, lines: ReadonlyArray<HistoryLine>, endMin: number, pool = "gpu") => {
  const text = [
    historyLine({ v: 1, kind: "mark", at: at(0), mark: "start" }),
    ...Array.from({ length: size }, (_, i) =>
      historyLine({ v: 1, kind: "node", at: at(0), node: `n${i}`, pool, zone: i % 2 === 0 ? "a" : "b" })
    ),
    ...lines.map(historyLine),
    historyLine({ v: 1, kind: "mark", at: at(endMin), mark: "end" })
  ].join("\n")
  const parsed = parseHistory(text)
  expect(parsed.bad).toEqual([])
  return parsed.events
}
const ready = (node: string, min: number, status: "True" | "False" | "Unknown", reason = "KubeletNotReady") =>
  ({ v: 1, kind: "condition", at: at(min), node, type: "Ready", status, reason }) as const

describe("whatif replay (the controller over a recording)", () => {
  it("repairs a node once its toleration has run out, and frees its slot after the repair duration", async () => {
    const r = await run(config(), history(10, [ready("n1", 10, "False")], 120))
    expect(r.repairs).toHaveLength(1)
    const x = r.repairs[0]!
    expect(x).toMatchObject({
      node: "n1",
      pool: "gpu",
      reason: "KubeletNotReady",
      action: "Replace",
      dryRun: false
    })
    // Ready=False tolerates 30 min; the replacement joins 5 min after it is asked for (the default), and the
    // recording has no pods to drain.
    expect(x.startedAt).toBe(T0 + 40 * MIN)
    expect(m(x.endsAt)).toBe(45)
    expect(r.holds).toEqual([])
  })

  it("reports a condition that recovered within its toleration as a flap, and repairs nothing", async () => {
    const r = await run(
      config(),
      history(10, [ready("n1", 10, "False"), ready("n1", 15, "True", "KubeletReady")], 120)
    )
    expect(r.repairs).toEqual([])
    expect(r.flaps).toEqual([
      expect.objectContaining({
        node: "n1",
        kind: "beforeToleration",
        from: T0 + 10 * MIN,
        to: T0 + 15 * MIN
      })
    ])
  })

  it("holds repairs while the pool's breaker is open, and repairs at once when it closes, one at a time", async () => {
    // 10 nodes, 20%: 2 unhealthy allowed. 4 fail at minute 10; two recover at minute 60.
    const down = ["n1", "n2", "n3", "n4"].map((n) => ready(n, 10, "False"))
    const up = ["n1", "n2"].map((n) => ready(n, 60, "True", "KubeletReady"))
    const r = await run(config(), history(10, [...down, ...up], 180), { repairDurationMs: 15 * MIN })
    // The breaker closes at minute 60 (2 of 10); the default in-flight budget (10%: 1) then takes them in turn.
    expect(r.repairs.map((x) => [x.node, m(x.startedAt)])).toEqual([
      ["n3", 60],
      ["n4", 75]
    ])
    const breaker = r.holds.filter((h) => h.cause === "breaker")
    expect(breaker.map((h) => [h.node, m(h.from), h.outcome])).toEqual([
      ["n1", 40, "recovered"],
      ["n2", 40, "recovered"],
      ["n3", 40, "started"],
      ["n4", 40, "held otherwise"]
    ])
    expect(r.holds.filter((h) => h.cause === "budget").map((h) => [h.node, m(h.from), m(h.to)])).toEqual([
      ["n4", 60, 75]
    ])
    expect(breaker[0]!.detail).toBe("4 of 10 unhealthy, allowed 2 (20%)")
    expect(r.flaps.map((f) => [f.node, f.kind])).toEqual([
      ["n1", "afterToleration"],
      ["n2", "afterToleration"]
    ])
  })

  it("queues a repair behind the in-flight budget until a repair ends", async () => {
    const r = await run(
      config({ maxInFlight: "1" }),
      history(10, [ready("n1", 10, "False"), ready("n2", 11, "False")], 180),
      { repairDurationMs: 15 * MIN }
    )
    expect(r.repairs.map((x) => [x.node, m(x.startedAt)])).toEqual([
      ["n1", 40],
      ["n2", 55]
    ])
    expect(r.holds.map((h) => [h.node, h.cause, m(h.from), m(h.to), h.outcome])).toEqual([
      ["n2", "budget", 41, 55, "started"]
    ])
    expect(r.holds[0]!.detail).toBe('1 in flight, allowed 1 by maxInFlight "1"')
  })

  it("a recorded deletion of a node under repair removes its Node; the repair ends with its own steps", async () => {
    const r = await run(
      config({ maxInFlight: "1" }),
      history(
        10,
        [
          ready("n1", 10, "False"),
          ready("n2", 11, "False"),
          { v: 1, kind: "deleted", at: at(44), node: "n1" }
        ],
        180
      ),
      { repairDurationMs: 15 * MIN }
    )
    // n1's replacement joins at 55 whatever happened to n1's Node (the live controller's own repair deleting it, in
    // the recording): its slot is held until then.
    expect(r.repairs.map((x) => [x.node, m(x.startedAt), m(x.endsAt)])).toEqual([
      ["n1", 40, 55],
      ["n2", 55, 70]
    ])
  })

  it("weighs a Karpenter NodePool's recorded facts: its disruption budget and its veto", async () => {
    const pool = (min: number, over: object) =>
      ({ v: 1, kind: "nodepool", at: at(min), pool: "gpu", claims: 10, ...over }) as const
    const r = await run(
      config(),
      history(
        10,
        [
          pool(0, { budgets: [{ nodes: "0", reasons: ["Drifted"] }, { nodes: "1" }] }),
          ready("n1", 10, "False"),
          ready("n2", 10, "False"),
          pool(100, { doNotRepair: true }),
          ready("n3", 100, "False")
        ],
        200
      ),
      { repairDurationMs: 30 * MIN }
    )
    // The budget that applies to repair (no reasons) allows 1; the Drifted one does not apply.
    expect(r.repairs.map((x) => [x.node, m(x.startedAt)])).toEqual([
      ["n1", 40],
      ["n2", 70]
    ])
    expect(r.holds.map((h) => [h.node, h.cause, h.detail])).toEqual([
      ["n2", "budget", '1 in flight, allowed 1 by nodepool gpu disruption budget "1"'],
      ["n3", "veto", "nodepool-annotation"]
    ])
  })

  it("evaluates a NodePool's business-hours freeze as Karpenter does: held inside its window, repaired outside", async () => {
    // T0 is Monday 2026-11-23 00:00Z; the freeze is 09:00-17:00 UTC on weekdays (issue #38).
    const r = await run(
      config(),
      history(
        10,
        [
          {
            v: 1,
            kind: "nodepool",
            at: at(0),
            pool: "gpu",
            claims: 10,
            budgets: [{ nodes: "0", schedule: "0 9 * * 1-5", duration: "8h" }]
          },
          ready("n1", 9 * 60 + 32, "False"),
          ready("n2", 17 * 60 + 30, "False")
        ],
        20 * 60
      )
    )
    // Due Monday 10:02, repaired at 17:00 exactly (woken at the window's end, not at its next 5-minute look); due
    // Monday 18:00, after the window, repaired at once.
    expect(r.repairs.map((x) => [x.node, isoTime(x.startedAt)])).toEqual([
      ["n1", "2026-11-23T17:00:00Z"],
      ["n2", "2026-11-23T18:00:00Z"]
    ])
    expect(
      r.holds.map((h) => [h.node, h.cause, h.detail, isoTime(h.from), isoTime(h.to), h.outcome])
    ).toEqual([
      [
        "n1",
        "budget",
        '0 in flight, allowed 0 by nodepool gpu disruption budget "0" (schedule "0 9 * * 1-5", duration 8h) active until 2026-11-23T17:00:00Z',
        "2026-11-23T10:02:00Z",
        "2026-11-23T17:00:00Z",
        "started"
      ]
    ])
  })

  it("never repairs a vetoed node and reports its hold and its recovery after the toleration", async () => {
    const r = await run(
      config(),
      history(
        10,
        [
          { v: 1, kind: "node", at: at(1), node: "n1", pool: "gpu", doNotRepair: true },
          ready("n1", 10, "False"),
          ready("n1", 90, "True", "KubeletReady")
        ],
        120
      )
    )
    expect(r.repairs).toEqual([])
    expect(r.holds).toEqual([
      expect.objectContaining({ node: "n1", cause: "veto", detail: "node-annotation", outcome: "recovered" })
    ])
    expect(r.flaps).toEqual([expect.objectContaining({ node: "n1", kind: "afterToleration" })])
  })

  it("dry-run: reports each would-be repair once and takes no slot", async () => {
    const r = await run(
      config({ dryRun: true, maxInFlight: "1" }),
      history(10, [ready("n1", 10, "False"), ready("n2", 10, "False")], 400)
    )
    expect(r.repairs.map((x) => [x.node, x.startedAt, x.dryRun])).toEqual([
      ["n1", T0 + 40 * MIN, true],
      ["n2", T0 + 40 * MIN, true]
    ])
    expect(r.holds).toEqual([])
  })

  it("a recovery the recording shows after the replay replaced the node is reported, not applied", async () => {
    const r = await run(
      config(),
      history(10, [ready("n1", 10, "False"), ready("n1", 100, "True", "KubeletReady")], 120)
    )
    expect(r.repairs.map((x) => x.node)).toEqual(["n1"])
    expect(r.ignored).toBe(1)
    expect(r.flaps).toEqual([
      expect.objectContaining({ node: "n1", kind: "afterRepair", from: T0 + 40 * MIN, to: T0 + 100 * MIN })
    ])
  })

  it("uses the reason policies of the config: an override's toleration and action", async () => {
    // A reboot takes the config's settle time (here 20 min): the machine is back healthy, as the replay's cloud
    // reboots it.
    const r = await run(
      config({
        reasons: { KubeletNotReady: { tolerationSeconds: 300, action: "Reboot" } },
        reboot: { settleSeconds: 1200, timeoutSeconds: 3600 }
      }),
      history(10, [ready("n1", 10, "False")], 120)
    )
    expect(r.repairs.map((x) => [m(x.startedAt), x.action, m(x.endsAt)])).toEqual([[15, "Reboot", 35]])
  })

  it("escalates as the controller does: the fault back within the window after a reboot is a Replace", async () => {
    const rebooting = {
      reasons: { KubeletNotReady: { tolerationSeconds: 300, action: "Reboot" } },
      reboot: { settleSeconds: 1200, timeoutSeconds: 3600 }
    }
    // Rebooted 15..35; back at 60 (25 min after) -> Replace at 65; a later fault on its replacement is its own.
    const r = await run(
      config(rebooting),
      history(10, [ready("n1", 10, "False"), ready("n1", 60, "False")], 200),
      { repairDurationMs: 20 * MIN }
    )
    expect(r.repairs.map((x) => [x.node, m(x.startedAt), x.action])).toEqual([
      ["n1", 15, "Reboot"],
      ["n1", 65, "Replace"]
    ])
    expect(r.repairs[1]!.escalation).toMatchObject({ afterMs: 25 * MIN, rebooted: { at: T0 + 35 * MIN } })
    expect(resultJson(r).repairs[1]).toMatchObject({
      escalation: { rebootedAt: at(35), cameBackAt: at(60), afterSeconds: 1500, windowSeconds: 3600 }
    })
    // Back after the window (here 20 min): rebooted again.
    const short = await run(
      config({ ...rebooting, escalation: { windowSeconds: 1200 } }),
      history(10, [ready("n1", 10, "False"), ready("n1", 60, "False")], 200),
      { repairDurationMs: 20 * MIN }
    )
    expect(short.repairs.map((x) => [x.action, x.escalation])).toEqual([
      ["Reboot", undefined],
      ["Reboot", undefined]
    ])
  })

  it("summarizes per pool and reason, and compares two policy sets", async () => {
    const h = history(10, [ready("n1", 10, "False"), ready("n1", 55, "True", "KubeletReady")], 120)
    const a = await run(config(), h)
    const b = await run(
      config({ policies: [{ conditionType: "Ready", status: "False", tolerationSeconds: 3600 }] }),
      h
    )
    expect(summarize(a)).toEqual([
      expect.objectContaining({ pool: "gpu", reason: "KubeletNotReady", repairs: 1, recoveredAfterRepair: 1 })
    ])
    expect(summarize(b)).toEqual([
      expect.objectContaining({
        pool: "gpu",
        reason: "KubeletNotReady",
        repairs: 0,
        flapsBeforeToleration: 1
      })
    ])
    expect(compare(a, b)).toEqual([expect.objectContaining({ pool: "gpu", onlyA: ["n1"], onlyB: [] })])
    const json = resultJson(a)
    expect(json.repairs[0]!.startedAt).toBe("2026-11-23T00:40:00Z")
    expect(json.window).toEqual({ from: "2026-11-23T00:00:00Z", to: "2026-11-23T02:00:00Z" })
  })

  it("reports a decision it has no name for under its tag (a gate added to decide later)", async () => {
    const d = {
      _tag: "ZoneStandDown",
      governing: {},
      zone: { cause: "concentrated", zone: { zone: "a", unhealthy: 5, size: 10 } },
      requeueAfterMs: 1000
    } as unknown as Decision
    expect(holdOf(d)).toEqual({
      cause: "zone-stand-down",
      detail: 'ZoneStandDown {"zone":{"cause":"concentrated","zone":{"zone":"a","unhealthy":5,"size":10}}}'
    })
  })

  it("keeps the controller's guarantees over any recording: budget, toleration, determinism", async () => {
    const transition = fc.record({
      node: fc.integer({ min: 0, max: 19 }),
      min: fc.integer({ min: 1, max: 360 }),
      status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
      type: fc.constantFrom("Ready", "KernelReady")
    })
    // Each run is the controller over 8 simulated hours, twice.
    await fc.assert(
      fc.asyncProperty(
        fc.array(transition, { maxLength: 60 }),
        fc.integer({ min: 10, max: 100 }),
        async (ts, percent) => {
          const lines = [
            historyLine({ v: 1, kind: "mark", at: at(0), mark: "start" }),
            ...Array.from({ length: 20 }, (_, i) =>
              historyLine({ v: 1, kind: "node", at: at(0), node: `n${i}`, pool: `p${i % 2}` })
            ),
            ...ts.map((t) =>
              historyLine({
                v: 1,
                kind: "condition",
                at: at(t.min),
                node: `n${t.node}`,
                type: t.type,
                status: t.status,
                reason: t.status === "True" ? "Fine" : "Broken"
              })
            ),
            historyLine({ v: 1, kind: "mark", at: at(480), mark: "end" })
          ]
          const events = parseHistory(lines.join("\n")).events
          const c = config({ maxInFlight: "2", maxUnhealthyPercent: percent })
          const r = await run(c, events)
          for (const x of r.repairs) {
            // Never before its toleration ran out.
            expect(x.dueAt).toBeDefined()
            expect(x.startedAt).toBeGreaterThanOrEqual(x.dueAt!)
            // Never more than maxInFlight at once in a pool.
            const overlapping = r.repairs.filter(
              (y) => y.pool === x.pool && y.startedAt <= x.startedAt && x.startedAt < y.endsAt
            )
            expect(overlapping.length).toBeLessThanOrEqual(2)
          }
          for (const h of r.holds) expect(h.to).toBeGreaterThanOrEqual(h.from)
          expect(await run(c, events)).toEqual(r)
        }
      ),
      { numRuns: 20 }
    )
  }, 120_000)

  it("holds a pool and reason whose replacements come up with the same fault, and releases it after the quiet period", async () => {
    const c = config({ relapse: { threshold: 2, windowSeconds: 7200, quietSeconds: 3600 } })
    const fresh = (node: string, min: number) =>
      ({ v: 1, kind: "node", at: at(min), node, pool: "gpu" }) as const
    const r = await run(
      c,
      history(
        10,
        [
          // n1 fails: repaired 40..55 (Ready=False tolerates 30 min; a replace takes 15 min).
          ready("n1", 10, "False"),
          // The live controller's replacement r1 comes up and fails the same way: a relapse when n1's repair ends.
          fresh("r1", 45),
          ready("r1", 50, "False"),
          // r1 repaired from 80; its replacement r2, up after n1's repair started, fails too: the second relapse
          // (of n1's repair, within its window) engages the hold (threshold 2).
          fresh("r2", 85),
          ready("r2", 90, "False")
        ],
        240
      ),
      { repairDurationMs: 15 * MIN }
    )
    expect(r.relapses.map((x) => [x.node, x.kind, x.repairedNode, x.pool, x.reason])).toEqual([
      ["r1", "fresh", "n1", "gpu", "KubeletNotReady"],
      ["r2", "fresh", "n1", "gpu", "KubeletNotReady"]
    ])
    // Engaged when r2 failed (minute 90); quiet for 60 min after that: lifted at minute 150.
    expect(r.relapseHolds.map((h) => [h.pool, h.reason, m(h.from), m(h.to), h.outcome, h.threshold])).toEqual(
      [["gpu", "KubeletNotReady", 90, 150, "lifted", 2]]
    )
    expect(r.relapseHolds[0]!.evidence.map((x) => x.node)).toEqual(["r1", "r2"])
    // r2 is due at minute 120 and held until the quiet period passes; repaired then, not before.
    expect(r.repairs.map((x) => [x.node, m(x.startedAt)])).toEqual([
      ["n1", 40],
      ["r1", 80],
      ["r2", 150]
    ])
    const held = r.holds.filter((h) => h.cause === "relapse")
    expect(held.map((h) => [h.node, m(h.from), m(h.to), h.outcome])).toEqual([["r2", 120, 150, "started"]])
    expect(held[0]!.evidence?.map((x) => x.node)).toEqual(["r1", "r2"])
    expect(held[0]!.detail).toContain("2 relapses within 120m of a repair (threshold 2)")
    const row = summarize(r).find((x) => x.pool === "gpu" && x.reason === "KubeletNotReady")
    expect(row).toMatchObject({ repairs: 3, held: { relapse: 1 }, relapses: 2, relapseHolds: 1 })
    const j = resultJson(r)
    expect(j.relapseHolds[0]).toMatchObject({ from: at(90), windowSeconds: 7200 })
    expect(j.holds.find((h) => h.cause === "relapse")?.evidence?.map((x) => x.at)).toEqual([at(50), at(90)])
    // Without relapse holds (off in the config), r2 is repaired as soon as it is due.
    const off = await run(
      config({ relapse: { enabled: false } }),
      history(
        10,
        [
          ready("n1", 10, "False"),
          fresh("r1", 45),
          ready("r1", 50, "False"),
          fresh("r2", 85),
          ready("r2", 90, "False")
        ],
        240
      ),
      { repairDurationMs: 15 * MIN }
    )
    expect(off.repairs.map((x) => [x.node, m(x.startedAt)])).toContainEqual(["r2", 120])
    expect(off.relapseHolds).toEqual([])
  })

  it("a higher-ranked fault overtakes the lower-ranked repairs queued before it (the controller's queue order)", async () => {
    const c = config({
      policies: [{ conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 60 }],
      maxUnhealthyPercent: 100,
      maxInFlight: "1"
    })
    const gpu = {
      v: 1,
      kind: "condition",
      at: at(50),
      node: "n4",
      type: "AcceleratedHardwareReady",
      status: "False",
      reason: "NvidiaXID79Error"
    } as const
    const r = await run(
      c,
      history(
        10,
        [
          // n1 takes the pool's one slot 40..55; n2 and n3 (rank unknown) queue behind it from minutes 42 and 43.
          ready("n1", 10, "False"),
          ready("n2", 12, "False"),
          ready("n3", 13, "False"),
          // A fatal GPU fault, due at minute 51: queued last, first when the slot frees.
          gpu
        ],
        240
      ),
      { repairDurationMs: 15 * MIN }
    )
    expect(r.repairs.map((x) => x.node)).toEqual(["n1", "n4", "n2", "n3"])
    expect(r.repairs[1]).toMatchObject({ node: "n4", reason: "NvidiaXID79Error" })
    expect(m(r.repairs[1]!.startedAt)).toBe(55)
    const budget = r.holds.filter((h) => h.cause === "budget")
    expect(budget.map((h) => [h.node, m(h.from)])).toEqual([
      ["n2", 42],
      ["n3", 43],
      ["n4", 51]
    ])
    const n4 = budget.find((h) => h.node === "n4")!
    expect([m(n4.to), n4.outcome]).toEqual([55, "started"])
    // n2 waited for n4's repair too: it starts when that one ends, not at minute 55.
    expect(r.repairs[2]!.startedAt).toBe(r.repairs[1]!.endsAt)
  })
})
