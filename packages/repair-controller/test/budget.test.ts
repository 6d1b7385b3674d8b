import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { afterFailure, backoffMs, overdue, phaseDeadline } from "../src/repair/budget.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import { advance, newRepairRecord } from "../src/repair/stateMachine.ts"

const config = Result.getOrThrow(decodeConfig({}))
const T0 = Date.parse("2026-01-01T00:00:00Z")
const match = {
  conditionType: "KernelReady",
  status: "False",
  reason: "R",
  action: "Replace",
  drainMode: "force",
  drainDeadlineMs: 600_000,
  captureLogs: false
} as PolicyMatch
const record = (): RepairRecord =>
  newRepairRecord(
    {
      id: "r",
      match,
      node: {
        name: "n",
        uid: "u",
        providerID: "p",
        labels: {},
        instance: { instanceId: "i", state: "running", launch: {}, owner: { kind: "standalone" } }
      }
    },
    T0
  )
const at = (r: RepairRecord, phase: RepairRecord["phase"]): RepairRecord => ({
  ...r,
  phase,
  phaseSince: new Date(T0).toISOString()
})

describe("every repair ends (issue #14): retry budget", () => {
  it("a retryable error is retried with doubling backoff, then the repair fails naming the phase and the error", () => {
    let r = at(record(), "Terminating")
    const delays: number[] = []
    for (;;) {
      const v = afterFailure(r, { retryable: true, message: "RequestLimitExceeded" }, config, T0)
      if (v._tag === "Fail") {
        r = v.record
        break
      }
      delays.push(v.delayMs)
      r = v.record
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000])
    expect(r.phase).toBe("Failed")
    expect(r.failure).toBe("Terminating: gave up after 8 attempts: RequestLimitExceeded")
    expect(r.retry).toBeUndefined()
  })

  it("a non-retryable error (InvalidProviderID, a missing launch template) fails at once", () => {
    const v = afterFailure(
      at(record(), "Replacing"),
      { retryable: false, message: "no launch template" },
      config,
      T0
    )
    expect(v._tag).toBe("Fail")
    expect(v.record.failure).toBe("Replacing: no launch template")
  })

  it("a new phase starts a fresh budget and deadline", () => {
    const r = afterFailure(at(record(), "Tainting"), { retryable: true, message: "503" }, config, T0).record
    expect(r.retry?.count).toBe(1)
    const next = advance(r, { _tag: "Tainted" }, T0 + 5000)
    expect(next.phase).toBe("Draining")
    expect(next.retry).toBeUndefined()
    expect(next.phaseSince).toBe(new Date(T0 + 5000).toISOString())
  })

  it("backoff is capped", () => {
    expect(backoffMs(config, 30)).toBe(60_000)
  })
})

describe("every repair ends (issue #14): phase deadlines", () => {
  it("Terminating past timeouts.terminateSeconds fails; before it, not", () => {
    const r = at(record(), "Terminating")
    expect(phaseDeadline(r, config)).toBe(T0 + 900_000)
    expect(overdue(r, config, T0 + 899_999)).toBeUndefined()
    expect(overdue(r, config, T0 + 900_000)?.failure).toContain("Terminating did not finish by")
  })

  it("Draining ends at the drain deadline plus timeouts.drainPastDeadlineSeconds, in either drain mode", () => {
    const r = advance(record(), { _tag: "Tainted" }, T0)
    expect(phaseDeadline(r, config)).toBe(T0 + 600_000 + 3_600_000)
  })

  it("phases that bound themselves (reboot, replacement, log capture) have no extra deadline", () => {
    for (const p of ["Rebooting", "Replacing", "CapturingLogs"] as const)
      expect(phaseDeadline(at(record(), p), config)).toBeUndefined()
  })
})
