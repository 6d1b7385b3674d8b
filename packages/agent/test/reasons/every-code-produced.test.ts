/**
 * Every catalog code is produced by some fixture through production code in this run (issue #20). Runs after
 * every other unit test file (its own vitest project, groupOrder 2) and reads the ledger they wrote
 * (produced-reasons.ts): reasons come only from what real checks, the rule engine, the DCGM decoder and
 * the NVIDIA monitor returned, never from a list kept here. Run alone it fails: the ledger is empty.
 */
import { CATALOG, resolveReason } from "@nodemend/reason-codes"
import { describe, expect, it } from "vitest"
import { ledgerDir, readLedger } from "./produced-reasons.ts"

describe("reason-code coverage", () => {
  it("every catalog code was produced by a fixture in this run", () => {
    const ledger = readLedger()
    expect(ledger.length, `no ledger at ${ledgerDir()}: run the package's whole unit suite`).toBeGreaterThan(
      0
    )
    const producedBy = new Map<string, Set<string>>()
    for (const { suite, reasons } of ledger)
      for (const r of reasons) {
        const code = resolveReason(r)?.entry.code
        expect(code, `${suite} produced ${r}, which is not a catalog code`).toBeDefined()
        const suites = producedBy.get(code!) ?? new Set()
        suites.add(suite)
        producedBy.set(code!, suites)
      }
    const missing = CATALOG.map((e) => e.code).filter((c) => !producedBy.has(c))
    expect(missing, "catalog codes that no fixture produced").toEqual([])
  })
})
