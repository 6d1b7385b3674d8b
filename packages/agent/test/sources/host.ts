/**
 * A temporary host root for source tests: proc/stat with a boot time, dev/kmsg as a regular file the
 * test appends records to, log files, pod logs, and journal files written by systemd-journal-remote.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import type { LogSourceId } from "../../src/rules/index.ts"

export const JOURNAL_REMOTE = [
  "/lib/systemd/systemd-journal-remote",
  "/usr/lib/systemd/systemd-journal-remote"
].find((p) => existsSync(p))
export const HAS_JOURNALCTL = spawnSync("journalctl", ["--version"]).status === 0
export const CAN_WRITE_JOURNAL = JOURNAL_REMOTE !== undefined && HAS_JOURNALCTL

export const BOOT_SECONDS = 1_700_000_000

/** As the kernel writes record text to /dev/kmsg: bytes < 0x20, >= 0x7f and the backslash as \xNN. */
export const escapeKmsg = (text: string): string =>
  [...Buffer.from(text, "utf8")]
    .map((b) =>
      b < 0x20 || b >= 0x7f || b === 0x5c ? `\\x${b.toString(16).padStart(2, "0")}` : String.fromCharCode(b)
    )
    .join("")

export interface TestHost {
  readonly root: string
  readonly appendKmsg: (
    text: string,
    options?: { seq?: number; usec?: number; dictionary?: Record<string, string> }
  ) => void
  readonly appendFile: (path: string, line: string) => void
  readonly appendPodLog: (name: string, line: string) => void
  readonly writeJournal: (
    entries: readonly { identifier: string; message: string; realtimeMs?: number }[],
    options?: { dir?: string }
  ) => void
  readonly append: (source: LogSourceId, text: string) => void
  readonly cleanup: () => void
}

export const makeTestHost = (): TestHost => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-host-"))
  mkdirSync(join(root, "proc"), { recursive: true })
  writeFileSync(join(root, "proc/stat"), `cpu  1 2 3 4\nbtime ${BOOT_SECONDS}\nprocesses 42\n`)
  mkdirSync(join(root, "dev"), { recursive: true })
  writeFileSync(join(root, "dev/kmsg"), "")
  mkdirSync(join(root, "var/log/journal"), { recursive: true })
  let seq = 100
  let journalFiles = 0
  const appendKmsg: TestHost["appendKmsg"] = (text, options = {}) => {
    seq = options.seq ?? seq + 1
    const usec = options.usec ?? seq * 1000
    const dict = Object.entries(options.dictionary ?? {})
      .map(([k, v]) => ` ${k}=${v}\n`)
      .join("")
    appendFileSync(join(root, "dev/kmsg"), `6,${seq},${usec},-;${escapeKmsg(text)}\n${dict}`)
  }
  const appendFile = (path: string, line: string) => {
    const full = join(root, path)
    mkdirSync(dirname(full), { recursive: true })
    appendFileSync(full, `${line}\n`)
  }
  const appendPodLog = (name: string, line: string) =>
    appendFile(
      `var/log/pods/kube-system_${name}-7x2kq_0d1c2b3a-1111-2222-3333-444455556666/${name}/0.log`,
      line
    )
  const writeJournal: TestHost["writeJournal"] = (entries, options = {}) => {
    if (JOURNAL_REMOTE === undefined) throw new Error("systemd-journal-remote is not installed")
    const exportText = entries
      .map((e, i) => {
        const us = BigInt(e.realtimeMs ?? Date.now()) * 1000n + BigInt(i)
        // Export format: one FIELD=value per line; a value with a newline would need the binary form.
        return [
          `__REALTIME_TIMESTAMP=${us}`,
          `__MONOTONIC_TIMESTAMP=${1000 + i}`,
          "_BOOT_ID=0123456789abcdef0123456789abcdef",
          `SYSLOG_IDENTIFIER=${e.identifier}`,
          `MESSAGE=${e.message}`,
          ""
        ].join("\n")
      })
      .join("\n")
    const dir = join(root, options.dir ?? "var/log/journal")
    mkdirSync(dir, { recursive: true })
    const file = join(dir, `test-${++journalFiles}.journal`)
    execFileSync(JOURNAL_REMOTE, [`--output=${file}`, "-"], {
      input: `${exportText}\n`,
      stdio: ["pipe", "ignore", "ignore"]
    })
  }
  const append = (source: LogSourceId, text: string) => {
    if (source === "dmesg") appendKmsg(text)
    else if (source.startsWith("file:")) appendFile(source.slice("file:".length), text)
    else if (source.startsWith("podlogs:")) appendPodLog(source.slice("podlogs:".length), text)
    else writeJournal([{ identifier: source.slice("journal:".length), message: text }])
  }
  return {
    root,
    appendKmsg,
    appendFile,
    appendPodLog,
    writeJournal,
    append,
    cleanup: () => rmSync(root, { recursive: true, force: true })
  }
}

/** Runs a scoped effect and keeps its scope open until `close` is called. */
export const openScoped = async <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => {
  const scope = await Effect.runPromise(Scope.make())
  const value = await Effect.runPromise(Scope.provide(scope)(effect))
  return { value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
