import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import type { Decision } from "../src/decide/decide.ts"
import { type HistoryLine, historyLine, isoTime, parseHistory } from "../src/whatif/history.ts"
import { holdOf, replay } from "../src/whatif/replay.ts"
import { compare, resultJson, summarize } from "../src/whatif/summary.ts"
import { MIN } from "./fixtures.ts"

const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))
const T0 = Date.parse("2026-11-23T00:00:00Z")
const at = (min: number) => isoTime(T0 + min * MIN)

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

describe("whatif replay (decide over a recording)", () => {
  it("repairs a node once its toleration has run out, and frees its slot after the repair duration", () => {
    const r = replay(config(), history(10, [ready("n1", 10, "False")], 120))
    expect(r.repairs).toHaveLength(1)
    const x = r.repairs[0]!
    expect(x).toMatchObject({
      node: "n1",
      pool: "gpu",
      reason: "KubeletNotReady",
      action: "Replace",
      dryRun: false
    })
    // Ready=False tolerates 30 min; the repair takes the drain deadline (10 min) + 5 min.
    expect(x.startedAt).toBe(T0 + 40 * MIN)
    expect(x.endsAt).toBe(T0 + 55 * MIN)
    expect(r.holds).toEqual([])
  })

  it("reports a condition that recovered within its toleration as a flap, and repairs nothing", () => {
    const r = replay(
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

  it("holds repairs while the pool's breaker is open, and repairs at once when it closes, one at a time", () => {
    // 10 nodes, 20%: 2 unhealthy allowed. 4 fail at minute 10; two recover at minute 60.
    const down = ["n1", "n2", "n3", "n4"].map((n) => ready(n, 10, "False"))
    const up = ["n1", "n2"].map((n) => ready(n, 60, "True", "KubeletReady"))
    const r = replay(config(), history(10, [...down, ...up], 180))
    // The breaker closes at minute 60 (2 of 10); the default in-flight budget (10%: 1) then takes them in turn.
    expect(r.repairs.map((x) => [x.node, x.startedAt])).toEqual([
      ["n3", T0 + 60 * MIN],
      ["n4", T0 + 75 * MIN]
    ])
    const breaker = r.holds.filter((h) => h.cause === "breaker")
    expect(breaker.map((h) => [h.node, h.from, h.outcome])).toEqual([
      ["n1", T0 + 40 * MIN, "recovered"],
      ["n2", T0 + 40 * MIN, "recovered"],
      ["n3", T0 + 40 * MIN, "started"],
      ["n4", T0 + 40 * MIN, "held otherwise"]
    ])
    expect(r.holds.filter((h) => h.cause === "budget").map((h) => [h.node, h.from, h.to])).toEqual([
      ["n4", T0 + 60 * MIN, T0 + 75 * MIN]
    ])
    expect(breaker[0]!.detail).toBe("4 of 10 unhealthy, allowed 2 (20%)")
    expect(r.flaps.map((f) => [f.node, f.kind])).toEqual([
      ["n1", "afterToleration"],
      ["n2", "afterToleration"]
    ])
  })

  it("queues a repair behind the in-flight budget until a repair ends", () => {
    const r = replay(
      config({ maxInFlight: "1" }),
      history(10, [ready("n1", 10, "False"), ready("n2", 11, "False")], 180)
    )
    expect(r.repairs.map((x) => [x.node, x.startedAt])).toEqual([
      ["n1", T0 + 40 * MIN],
      ["n2", T0 + 55 * MIN]
    ])
    expect(r.holds).toEqual([
      expect.objectContaining({
        node: "n2",
        cause: "budget",
        from: T0 + 41 * MIN,
        to: T0 + 55 * MIN,
        outcome: "started"
      })
    ])
    expect(r.holds[0]!.detail).toBe('1 in flight, allowed 1 by maxInFlight "1"')
  })

  it("a recorded deletion of a node under repair ends its repair there (a live controller's own repair)", () => {
    const r = replay(
      config({ maxInFlight: "1" }),
      history(
        10,
        [
          ready("n1", 10, "False"),
          ready("n2", 11, "False"),
          { v: 1, kind: "deleted", at: at(44), node: "n1" }
        ],
        180
      )
    )
    expect(r.repairs.map((x) => [x.node, x.startedAt, x.endsAt])).toEqual([
      ["n1", T0 + 40 * MIN, T0 + 44 * MIN],
      ["n2", T0 + 44 * MIN, T0 + 59 * MIN]
    ])
  })

  it("weighs a Karpenter NodePool's recorded facts: its disruption budget and its veto", () => {
    const pool = (min: number, over: object) =>
      ({ v: 1, kind: "nodepool", at: at(min), pool: "gpu", claims: 10, ...over }) as const
    const r = replay(
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
    expect(r.repairs.map((x) => [x.node, x.startedAt])).toEqual([
      ["n1", T0 + 40 * MIN],
      ["n2", T0 + 70 * MIN]
    ])
    expect(r.holds.map((h) => [h.node, h.cause, h.detail])).toEqual([
      ["n2", "budget", '1 in flight, allowed 1 by nodepool gpu disruption budget "1"'],
      ["n3", "veto", "nodepool-annotation"]
    ])
  })

  it("evaluates a NodePool's business-hours freeze as Karpenter does: held inside its window, repaired outside", () => {
    // T0 is Monday 2026-11-23 00:00Z; the freeze is 09:00-17:00 UTC on weekdays (issue #38).
    const DAY = 24 * 60
    const r = replay(
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
          ready("n2", 6 * DAY + 11 * 60 + 30, "False")
        ],
        7 * DAY
      )
    )
    // Due Monday 10:02, repaired at 17:00 exactly (woken at the window's end, not at its next 5-minute look); due
    // Sunday noon, repaired at once.
    expect(r.repairs.map((x) => [x.node, isoTime(x.startedAt)])).toEqual([
      ["n1", "2026-11-23T17:00:00Z"],
      ["n2", "2026-11-29T12:00:00Z"]
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

  it("never repairs a vetoed node and reports its hold and its recovery after the toleration", () => {
    const r = replay(
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

  it("dry-run: reports each would-be repair once and takes no slot", () => {
    const r = replay(
      config({ dryRun: true, maxInFlight: "1" }),
      history(10, [ready("n1", 10, "False"), ready("n2", 10, "False")], 400)
    )
    expect(r.repairs.map((x) => [x.node, x.startedAt, x.dryRun])).toEqual([
      ["n1", T0 + 40 * MIN, true],
      ["n2", T0 + 40 * MIN, true]
    ])
    expect(r.holds).toEqual([])
  })

  it("a recovery the recording shows after the replay replaced the node is reported, not applied", () => {
    const r = replay(
      config(),
      history(10, [ready("n1", 10, "False"), ready("n1", 100, "True", "KubeletReady")], 120)
    )
    expect(r.repairs.map((x) => x.node)).toEqual(["n1"])
    expect(r.ignored).toBe(1)
    expect(r.flaps).toEqual([
      expect.objectContaining({ node: "n1", kind: "afterRepair", from: T0 + 40 * MIN, to: T0 + 100 * MIN })
    ])
  })

  it("uses the reason policies of the config: an override's toleration and action", () => {
    const r = replay(
      config({ reasons: { KubeletNotReady: { tolerationSeconds: 300, action: "Reboot" } } }),
      history(10, [ready("n1", 10, "False")], 120),
      { repairDurationMs: 20 * MIN }
    )
    expect(r.repairs.map((x) => [x.startedAt, x.action, x.endsAt])).toEqual([
      [T0 + 15 * MIN, "Reboot", T0 + 35 * MIN]
    ])
  })

  it("escalates as the controller does: the fault back within the window after a reboot is a Replace", () => {
    const reboot = config({ reasons: { KubeletNotReady: { tolerationSeconds: 300, action: "Reboot" } } })
    // Rebooted 15..35; back at 60 (25 min after) -> Replace at 65; a later fault on its replacement is its own.
    const r = replay(reboot, history(10, [ready("n1", 10, "False"), ready("n1", 60, "False")], 200), {
      repairDurationMs: 20 * MIN
    })
    expect(r.repairs.map((x) => [x.node, x.startedAt, x.action])).toEqual([
      ["n1", T0 + 15 * MIN, "Reboot"],
      ["n1", T0 + 65 * MIN, "Replace"]
    ])
    expect(r.repairs[1]!.escalation).toMatchObject({ afterMs: 25 * MIN, rebooted: { at: T0 + 35 * MIN } })
    expect(resultJson(r).repairs[1]).toMatchObject({
      escalation: { rebootedAt: at(35), cameBackAt: at(60), afterSeconds: 1500, windowSeconds: 3600 }
    })
    // Back after the window (here 20 min): rebooted again.
    const short = replay(
      config({
        ...{ reasons: { KubeletNotReady: { tolerationSeconds: 300, action: "Reboot" } } },
        escalation: { windowSeconds: 1200 }
      }),
      history(10, [ready("n1", 10, "False"), ready("n1", 60, "False")], 200),
      { repairDurationMs: 20 * MIN }
    )
    expect(short.repairs.map((x) => [x.action, x.escalation])).toEqual([
      ["Reboot", undefined],
      ["Reboot", undefined]
    ])
  })

  it("summarizes per pool and reason, and compares two policy sets", () => {
    const h = history(10, [ready("n1", 10, "False"), ready("n1", 55, "True", "KubeletReady")], 120)
    const a = replay(config(), h)
    const b = replay(
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

  it("reports a decision it has no name for under its tag (a gate added to decide later)", () => {
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

  it("keeps the controller's guarantees over any recording: budget, toleration, determinism", () => {
    const transition = fc.record({
      node: fc.integer({ min: 0, max: 19 }),
      min: fc.integer({ min: 1, max: 360 }),
      status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
      type: fc.constantFrom("Ready", "KernelReady")
    })
    fc.assert(
      fc.property(
        fc.array(transition, { maxLength: 60 }),
        fc.integer({ min: 10, max: 100 }),
        (ts, percent) => {
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
          const r = replay(c, events)
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
          expect(replay(c, events)).toEqual(r)
        }
      ),
      { numRuns: 150 }
    )
  })

  it("holds a pool and reason whose replacements come up with the same fault, and releases it after the quiet period", () => {
    const c = config({ relapse: { threshold: 2, windowSeconds: 7200, quietSeconds: 3600 } })
    const fresh = (node: string, min: number) =>
      ({ v: 1, kind: "node", at: at(min), node, pool: "gpu" }) as const
    const r = replay(
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
      )
    )
    expect(r.relapses.map((x) => [x.node, x.kind, x.repairedNode, x.pool, x.reason])).toEqual([
      ["r1", "fresh", "n1", "gpu", "KubeletNotReady"],
      ["r2", "fresh", "n1", "gpu", "KubeletNotReady"]
    ])
    // Engaged when r2 failed (minute 90); quiet for 60 min after that: lifted at minute 150.
    expect(r.relapseHolds).toEqual([
      expect.objectContaining({
        pool: "gpu",
        reason: "KubeletNotReady",
        from: T0 + 90 * MIN,
        to: T0 + 150 * MIN,
        outcome: "lifted",
        threshold: 2
      })
    ])
    expect(r.relapseHolds[0]!.evidence.map((x) => x.node)).toEqual(["r1", "r2"])
    // r2 is due at minute 120 and held until the quiet period passes; repaired then, not before.
    expect(r.repairs.map((x) => [x.node, x.startedAt])).toEqual([
      ["n1", T0 + 40 * MIN],
      ["r1", T0 + 80 * MIN],
      ["r2", T0 + 150 * MIN]
    ])
    const held = r.holds.filter((h) => h.cause === "relapse")
    expect(held.map((h) => [h.node, h.from, h.to, h.outcome])).toEqual([
      ["r2", T0 + 120 * MIN, T0 + 150 * MIN, "started"]
    ])
    expect(held[0]!.evidence?.map((x) => x.node)).toEqual(["r1", "r2"])
    expect(held[0]!.detail).toContain("2 relapses within 120m of a repair (threshold 2)")
    const row = summarize(r).find((x) => x.pool === "gpu" && x.reason === "KubeletNotReady")
    expect(row).toMatchObject({ repairs: 3, held: { relapse: 1 }, relapses: 2, relapseHolds: 1 })
    const j = resultJson(r)
    expect(j.relapseHolds[0]).toMatchObject({ from: at(90), to: at(150), windowSeconds: 7200 })
    expect(j.holds.find((h) => h.cause === "relapse")?.evidence?.map((x) => x.at)).toEqual([at(50), at(90)])
    // Without relapse holds (off in the config), r2 is repaired as soon as it is due.
    const off = replay(
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
      )
    )
    expect(off.repairs.map((x) => [x.node, x.startedAt])).toContainEqual(["r2", T0 + 120 * MIN])
    expect(off.relapseHolds).toEqual([])
  })

  it("a higher-ranked fault overtakes the lower-ranked repairs queued before it (the controller's queue order)", () => {
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
    const r = replay(
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
      )
    )
    expect(r.repairs.map((x) => x.node)).toEqual(["n1", "n4", "n2", "n3"])
    expect(r.repairs[1]).toMatchObject({ node: "n4", reason: "NvidiaXID79Error", startedAt: T0 + 55 * MIN })
    const budget = r.holds.filter((h) => h.cause === "budget")
    expect(budget.map((h) => [h.node, h.from])).toEqual([
      ["n2", T0 + 42 * MIN],
      ["n3", T0 + 43 * MIN],
      ["n4", T0 + 51 * MIN]
    ])
    expect(budget.find((h) => h.node === "n4")).toMatchObject({ to: T0 + 55 * MIN, outcome: "started" })
    // n2 waited for n4's repair too: it starts when that one ends, not at minute 55.
    expect(r.repairs[2]!.startedAt).toBe(r.repairs[1]!.endsAt)
  })
})
