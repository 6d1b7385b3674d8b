// The whole plan (issue #25): every gate the runner used to judge on its own is an input of the next step.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import { evictionResumesAt, type Gates, NOT_THE_SAME_NODE, planStep } from "../src/repair/plan.ts"
import { advance, newRepairRecord } from "../src/repair/stateMachine.ts"
import { node, xid79Match } from "./fixtures.ts"

const config = Result.getOrThrow(decodeConfig({}))
const T0 = Date.parse("2026-01-01T00:00:00Z")

const record = (phase: RepairRecord["phase"], over: Partial<RepairRecord> = {}): RepairRecord => ({
  ...newRepairRecord(
    {
      id: "r1",
      match: xid79Match(T0),
      node: {
        name: "n1",
        uid: "u1",
        providerID: "kwok://n1",
        labels: {},
        zone: "us-west-2a",
        instance: {
          instanceId: "n1",
          state: "running",
          zone: "us-west-2a",
          launch: {},
          owner: { kind: "standalone" }
        }
      }
    },
    T0
  ),
  phase,
  ...over
})

const open: Gates = {
  liveNode: { ...node("n1"), uid: "u1" },
  taintHoldMs: 0,
  drainSlot: true,
  shifts: { _tag: "Known", shifts: [] }
}
const shiftAway = {
  _tag: "Known",
  shifts: [{ kind: "zonal-shift", zone: "us-west-2a", expiresAt: new Date(T0 + 3_600_000) }]
} as const

describe("planStep", () => {
  it("acts when every gate is open", () => {
    expect(planStep(record("Tainting"), config, T0, open)).toEqual({ _tag: "Act", action: { _tag: "Taint" } })
  })

  it("ends the repair when the Node under its name is another object", () => {
    const step = planStep(record("Tainting"), config, T0, { ...open, liveNode: { ...node("n1"), uid: "u2" } })
    expect(step._tag).toBe("End")
    if (step._tag === "End") expect(step.record.failure).toContain(NOT_THE_SAME_NODE)
  })

  it("ends a phase past its deadline", () => {
    const step = planStep(record("Tainting"), config, T0 + 3_600_000, open)
    expect(step._tag === "End" && step.record.phase).toBe("Failed")
  })

  it("every step after a taint waits for a wave's taints first, a drain then for its slot; taints do not wait", () => {
    const draining = record("Draining", { drainDeadline: new Date(T0 + 600_000).toISOString() })
    expect(planStep(draining, config, T0, { ...open, taintHoldMs: 1500 })).toEqual({
      _tag: "Hold",
      cause: "taintFirst",
      retryAfterMs: 1500
    })
    expect(planStep(draining, config, T0, { ...open, drainSlot: false })).toEqual({
      _tag: "Hold",
      cause: "drainSlot"
    })
    // Capacity first's launch and the termination are behind the taints too (issue #25), not only drains.
    for (const phase of ["Replacing", "Terminating"] as const) {
      const later = record(phase)
      expect(planStep(later, config, T0, open)._tag).toBe("Act")
      expect(planStep(later, config, T0, { ...open, taintHoldMs: 700 })).toEqual({
        _tag: "Hold",
        cause: "taintFirst",
        retryAfterMs: 700
      })
    }
    expect(
      planStep(record("Tainting"), config, T0, { ...open, drainSlot: false, taintHoldMs: 1500 })._tag
    ).toBe("Act")
  })

  it("a zonal shift holds termination, and a cloud that cannot say holds it too (fail closed)", () => {
    const terminating = record("Terminating")
    const held = planStep(terminating, config, T0, { ...open, shifts: shiftAway })
    expect(held._tag === "Hold" && held.cause).toBe("zonalShift")
    const unknown = planStep(terminating, config, T0, {
      ...open,
      shifts: { _tag: "Unknown", error: "throttled" }
    })
    expect(unknown._tag === "Hold" && unknown.cause).toBe("zonalShift")
    // Taints and drains go on under a shift: only the irreversible step waits.
    expect(planStep(record("Tainting"), config, T0, { ...open, shifts: shiftAway })._tag).toBe("Act")
  })
})

describe("the eviction backoff is the record's and the plan's (a restart keeps it)", () => {
  const cfg = Result.getOrThrow(
    decodeConfig({ drain: { evictionBackoffInitialMs: 1000, evictionBackoffMaxMs: 5000 } })
  )
  const draining = record("Draining", { drainDeadline: new Date(T0 + 600_000).toISOString() })

  it("each blocked round doubles the wait, capped; evictions accepted start it afresh", () => {
    let r = draining
    const waits: number[] = []
    for (let round = 0; round < 5; round++) {
      r = advance(r, { _tag: "EvictionBlocked" }, T0)
      const step = planStep(r, cfg, T0, open)
      waits.push(step._tag === "Hold" && step.cause === "evictionBackoff" ? step.retryAfterMs : -1)
    }
    expect(waits).toEqual([1000, 2000, 4000, 5000, 5000])
    expect(planStep(r, cfg, T0 + 5000, open)).toEqual({
      _tag: "Act",
      action: { _tag: "Drain", deadlinePassed: false }
    })
    expect(advance(r, { _tag: "EvictionsAccepted" }, T0).evictionBlocked).toBeUndefined()
    expect(advance(r, { _tag: "Drained" }, T0).evictionBlocked).toBeUndefined()
  })

  it("never waits past the drain deadline", () => {
    const r = advance(
      { ...draining, evictionBlocked: { rounds: 3, at: new Date(T0 + 599_000).toISOString() } },
      { _tag: "EvictionBlocked" },
      T0 + 599_000
    )
    expect(evictionResumesAt(r, cfg)).toBe(T0 + 600_000)
  })
})
