/** globalSetup (vitest main process): this run's ledger starts empty, whatever a recycled pid left behind. */
import { rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): void {
  // the workers' process.ppid is this process's pid (produced-reasons.ts ledgerDir)
  rmSync(join(tmpdir(), `nodemend-reason-ledger-${process.pid}`), { recursive: true, force: true })
}
