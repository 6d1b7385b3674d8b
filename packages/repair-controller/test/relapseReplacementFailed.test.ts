// A replacement that fails the health gate is a relapse of its repair at once (issue #41), while the repair still
// runs: once per node name, and it engages the hold at the threshold like any relapse. Pure.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { emptyLedger, holdVerdict, relapsePolicy, replacementFailed } from "../src/decide/relapse.ts"
import type { Relapse } from "../src/domain/RelapseLedger.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const REASON = "NvidiaXID79Error"
const policy = relapsePolicy(
  Result.getOrThrow(decodeConfig({ relapse: { threshold: 2, windowSeconds: 600 } })),
  "p",
  REASON
)
const failed = (node: string, at: number): Relapse => ({
  node,
  repairId: "r1",
  repairedNode: "n1",
  kind: "replacement",
  at,
  afterMs: 5000
})

describe("a replacement that fails the health gate", () => {
  it("is a relapse of its repair, counted once per node name, and engages the hold at the threshold", () => {
    const first = replacementFailed(
      emptyLedger("p", REASON, "AcceleratedHardwareReady"),
      failed("n1-a", T0),
      policy,
      T0
    )
    expect(first.relapse).toEqual(failed("n1-a", T0))
    expect(first.engaged).toBeUndefined()
    // The same node again (seen again, or sighted later as a fresh node of the pool): nothing more.
    const again = replacementFailed(first.ledger, failed("n1-a", T0 + 1000), policy, T0 + 1000)
    expect(again.relapse).toBeUndefined()
    expect(again.ledger.relapses).toHaveLength(1)
    const second = replacementFailed(again.ledger, failed("n1-b", T0 + 2000), policy, T0 + 2000)
    expect(second.engaged?.evidence.map((r) => r.node)).toEqual(["n1-a", "n1-b"])
    expect(holdVerdict(second.ledger, policy, T0 + 3000)._tag).toBe("Held")
  })

  it("is not recorded where the policy keeps no relapses", () => {
    const off = { ...policy, enabled: false }
    expect(
      replacementFailed(emptyLedger("p", REASON, "KernelReady"), failed("n1-a", T0), off, T0).relapse
    ).toBeUndefined()
  })
})
