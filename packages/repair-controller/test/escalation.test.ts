// Per-node escalation across repairs (decide/escalation.ts, through decide): a node whose fault comes back within
// the window after a Reboot repair healed it is replaced the next time. Pure, with fixed times.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decide } from "../src/decide/decide.ts"
import { escalationText } from "../src/decide/escalation.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { RebootMark } from "../src/domain/Reboots.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
/** The reboot repair ended here; a fault tolerates 1 min. */
const REBOOTED_AT = T0 + 10 * MIN

const config = (raw: Record<string, unknown> = {}): ControllerConfig =>
  Result.getOrThrow(
    decodeConfig({
      policies: [
        { conditionType: "KernelReady", status: "False", tolerationSeconds: 60, action: "Reboot" },
        { conditionType: "NetworkingReady", status: "False", tolerationSeconds: 60, action: "Reboot" }
      ],
      ...raw
    })
  )

const mark = (over: Partial<RebootMark> = {}): RebootMark => ({
  node: "n1",
  providerID: "kwok://n1",
  uid: "u1",
  conditionType: "KernelReady",
  reason: "KernelDeadlock",
  repairId: "r-reboot",
  at: REBOOTED_AT,
  ...over
})

/**
 * The decision for n1 whose `type` fault (`reason`) came back at `backAt`, `afterMs` later (default 2 min: once a
 * 1-minute toleration has run out).
 */
const decideBack = (
  c: ControllerConfig,
  backAt: number,
  marks: ReadonlyArray<RebootMark>,
  opts: { type?: string; reason?: string; node?: Partial<NodeView>; afterMs?: number } = {}
) => {
  const n = {
    ...node("n1", [cond(opts.type ?? "KernelReady", "False", backAt, opts.reason ?? "KernelDeadlock")], {
      pool: "p"
    }),
    uid: "u1",
    ...opts.node
  }
  const healthy = Array.from({ length: 9 }, (_, i) =>
    node(`ok${i}`, [cond("Ready", "True", T0)], { pool: "p" })
  )
  const counter = makePoolCounter(c)
  for (const x of [n, ...healthy]) counter.upsert(x)
  return decide({
    config: c,
    node: n,
    stats: counter.stats(),
    shifts: { _tag: "Known", shifts: [] },
    now: backAt + (opts.afterMs ?? 2 * MIN),
    reboots: (name) => marks.filter((m) => m.node === name)
  })
}

const actionOf = (d: ReturnType<typeof decide>) =>
  d._tag === "Repair" || d._tag === "WouldRepair" ? d.governing.action : d._tag

describe("escalation across repairs (decide)", () => {
  it("the fault back within the window after a reboot: Replace, and the Event says why", () => {
    const d = decideBack(config(), REBOOTED_AT + 12 * MIN, [mark()])
    expect(d._tag).toBe("Repair")
    if (d._tag !== "Repair") return
    expect(d.governing.action).toBe("Replace")
    expect(d.escalation).toMatchObject({
      afterMs: 12 * MIN,
      windowMs: 60 * MIN,
      rebooted: { repairId: "r-reboot" }
    })
    expect(escalationText(d.escalation!, d.governing)).toBe(
      "rebooted for KernelReady (KernelDeadlock) at 2026-01-01T00:10:00.000Z (repair r-reboot), the fault came back after 12m (KernelReady=False, KernelDeadlock), within the escalation window of 60m: replacing instead of rebooting"
    )
  })

  it("the fault back after the window: Reboot again", () => {
    const d = decideBack(config(), REBOOTED_AT + 61 * MIN, [mark()])
    expect(actionOf(d)).toBe("Reboot")
    expect(d._tag === "Repair" && d.escalation).toBe(undefined)
    // The window's last millisecond still counts.
    expect(actionOf(decideBack(config(), REBOOTED_AT + 60 * MIN, [mark()]))).toBe("Replace")
  })

  it("another condition type than the reboot's: Reboot; another reason of the same type: Replace", () => {
    expect(actionOf(decideBack(config(), REBOOTED_AT + 5 * MIN, [mark()], { type: "NetworkingReady" }))).toBe(
      "Reboot"
    )
    expect(actionOf(decideBack(config(), REBOOTED_AT + 5 * MIN, [mark()], { reason: "KernelBug" }))).toBe(
      "Replace"
    )
  })

  it("a fault older than the reboot's end is not one that came back", () => {
    expect(actionOf(decideBack(config(), REBOOTED_AT - 5 * MIN, [mark()]))).toBe("Reboot")
  })

  it("the same machine only: a Node re-created under the name keeps its history, another instance does not", () => {
    expect(actionOf(decideBack(config(), REBOOTED_AT + 5 * MIN, [mark()], { node: { uid: "u2" } }))).toBe(
      "Replace"
    )
    expect(
      actionOf(
        decideBack(config(), REBOOTED_AT + 5 * MIN, [mark()], { node: { providerID: "kwok://other" } })
      )
    ).toBe("Reboot")
    expect(actionOf(decideBack(config(), REBOOTED_AT + 5 * MIN, [mark({ node: "n2" })]))).toBe("Reboot")
  })

  it("the window per policy and overall; off by `enabled: false` or a policy's 0", () => {
    const short = config({
      policies: [
        {
          conditionType: "KernelReady",
          status: "False",
          tolerationSeconds: 60,
          action: "Reboot",
          escalationWindowSeconds: 600
        }
      ]
    })
    expect(actionOf(decideBack(short, REBOOTED_AT + 9 * MIN, [mark()]))).toBe("Replace")
    expect(actionOf(decideBack(short, REBOOTED_AT + 11 * MIN, [mark()]))).toBe("Reboot")
    const long = config({ escalation: { windowSeconds: 7200 } })
    expect(actionOf(decideBack(long, REBOOTED_AT + 90 * MIN, [mark()]))).toBe("Replace")
    const off = config({ escalation: { enabled: false } })
    expect(actionOf(decideBack(off, REBOOTED_AT + 5 * MIN, [mark()]))).toBe("Reboot")
    const offForPolicy = config({
      policies: [
        {
          conditionType: "KernelReady",
          status: "False",
          tolerationSeconds: 60,
          action: "Reboot",
          escalationWindowSeconds: 0
        }
      ]
    })
    expect(actionOf(decideBack(offForPolicy, REBOOTED_AT + 5 * MIN, [mark()]))).toBe("Reboot")
  })

  it("dry-run says it would Replace, and why", () => {
    const d = decideBack(config({ dryRun: true }), REBOOTED_AT + 5 * MIN, [mark()])
    expect(d._tag).toBe("WouldRepair")
    expect(d._tag === "WouldRepair" && [d.governing.action, d.escalation?.afterMs]).toEqual([
      "Replace",
      5 * MIN
    ])
  })

  it("XID 79 (Reboot from NVIDIA's catalog, reason-codes 2.0.0): rebooted, back within the window, replaced", () => {
    // No policy action: the catalog's default for NvidiaXID79Error, on the catalog's 10-minute toleration.
    const c = config()
    // Looked at 11 min after the fault: past the catalog's 10-minute toleration.
    const xid79 = (backAt: number, marks: ReadonlyArray<RebootMark>) =>
      decideBack(c, backAt, marks, {
        type: "AcceleratedHardwareReady",
        reason: "NvidiaXID79Error",
        afterMs: 11 * MIN
      })
    // The first XID 79: the catalog's Reboot.
    const first = xid79(T0, [])
    expect(first._tag === "Repair" && [first.governing.action, first.governing.actionSource]).toEqual([
      "Reboot",
      "catalog"
    ])
    // That reboot ended at REBOOTED_AT; the GPU falls off the bus again 20 min later: Replace, and why.
    const rebooted = mark({ conditionType: "AcceleratedHardwareReady", reason: "NvidiaXID79Error" })
    const relapse = xid79(REBOOTED_AT + 20 * MIN, [rebooted])
    expect(relapse._tag).toBe("Repair")
    if (relapse._tag !== "Repair") return
    expect(relapse.governing.action).toBe("Replace")
    expect(escalationText(relapse.escalation!, relapse.governing)).toMatch(
      /^rebooted for AcceleratedHardwareReady \(NvidiaXID79Error\) at .* the fault came back after 20m .*: replacing instead of rebooting$/
    )
    // Back after the window: a Reboot again.
    expect(actionOf(xid79(REBOOTED_AT + 61 * MIN, [rebooted]))).toBe("Reboot")
  })

  it("a policy that replaces anyway carries no escalation", () => {
    const replace = config({
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60, action: "Replace" }]
    })
    const d = decideBack(replace, REBOOTED_AT + 5 * MIN, [mark()])
    expect(d._tag === "Repair" && [d.governing.action, d.escalation]).toEqual(["Replace", undefined])
  })
})
