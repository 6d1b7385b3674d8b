/**
 * The ledger of reasons that production code produced during one vitest run (issue #20: every catalog code
 * is produced by some fixture). Tests call `recordProduced` with what a real check, rule engine, decoder or
 * monitor returned, at the helpers every fixture suite goes through (runAt, the rule-engine feed, the
 * NVIDIA monitor's sink). Each worker appends to its own file in a directory named after the vitest main
 * process (the parent of every forked worker), so concurrent runs never mix; the coverage project reads
 * it after every other test file has run (vitest.config.ts: groupOrder).
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import type { Finding } from "../../src/model.ts"

/** The run's ledger directory: one per vitest main process. */
export const ledgerDir = (): string => join(tmpdir(), `nodemend-reason-ledger-${process.ppid}`)

/** Records the reasons of the Detections in `findings` (Resolutions produce no code) under the test file. */
export const recordProduced = (findings: readonly Finding[]): void => {
  const suite = `${expect.getState().testPath ?? "?"} > ${expect.getState().currentTestName ?? "?"}`
  const reasons = findings.filter((f) => f._tag === "Detection").map((f) => f.reason)
  if (reasons.length === 0) return
  const dir = ledgerDir()
  mkdirSync(dir, { recursive: true })
  appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify({ suite, reasons })}\n`)
}

export interface LedgerEntry {
  readonly suite: string
  readonly reasons: readonly string[]
}

export const readLedger = (dir = ledgerDir()): LedgerEntry[] => {
  let files: string[]
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"))
  } catch {
    return []
  }
  return files.flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as LedgerEntry)
  )
}
