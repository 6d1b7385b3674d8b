/** A throwaway host root on disk for check tests: write files as the kernel would show them. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { hostFiles, type HostFiles } from "../../src/checks/host-files.ts"
import type { Finding } from "../../src/model.ts"
import type { PeriodicCheck, TickContext } from "../../src/scheduler/periodic-check.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"

export interface HostRoot {
  readonly root: string
  readonly files: HostFiles
  write(rel: string, content: string | Buffer): void
  mkdir(rel: string): void
  link(rel: string, target: string): void
  remove(rel: string): void
  cleanup(): void
}

export const makeHostRoot = (): HostRoot => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-host-"))
  return {
    root,
    files: hostFiles(root),
    write: (rel, content) => {
      mkdirSync(dirname(join(root, rel)), { recursive: true })
      writeFileSync(join(root, rel), content)
    },
    mkdir: (rel) => mkdirSync(join(root, rel), { recursive: true }),
    link: (rel, target) => {
      mkdirSync(dirname(join(root, rel)), { recursive: true })
      symlinkSync(target, join(root, rel))
    },
    remove: (rel) => rmSync(join(root, rel), { recursive: true, force: true }),
    cleanup: () => rmSync(root, { recursive: true, force: true })
  }
}

/** A /proc/<pid>/stat line with the given state and delayacct_blkio_ticks (field 42). */
export const procStat = (pid: number, comm: string, state = "S", blkioTicks = 0): string => {
  const fields = Array.from({ length: 50 }, () => "0")
  fields[0] = state
  fields[42 - 3] = String(blkioTicks)
  return `${pid} (${comm}) ${fields.join(" ")}\n`
}

export const runAt = (check: PeriodicCheck, files: HostFiles, nowMs: number): Promise<readonly Finding[]> => {
  const tick: TickContext = { nowMs, pids: files.pids }
  return Effect.runPromise(check.run(tick).pipe(Effect.tap((fs) => Effect.sync(() => recordProduced(fs)))))
}

export const reasons = (fs: readonly Finding[]) =>
  fs.map((f) => `${f._tag === "Detection" ? "+" : "-"}${f.reason}${f.subject ? `@${f.subject}` : ""}`)
