/**
 * globalSetup (vitest main process): this run's ledger starts empty, whatever a recycled pid left behind,
 * and is removed when the run ends, also when the coverage project did not run (a filtered run).
 */
import { rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  // the workers' process.ppid is this process's pid (produced-reasons.ts ledgerDir)
  const dir = join(tmpdir(), `nodemend-reason-ledger-${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  return () => rmSync(dir, { recursive: true, force: true })
}
