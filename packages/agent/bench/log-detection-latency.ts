/**
 * Source-to-Detection latency of the log monitors: a fault line is written to its source under a
 * temporary host root (append to dev/kmsg, append to ipamd.log, a journal file written by
 * systemd-journal-remote) and the time until makeLogMonitors delivers its Detection is measured.
 * Prints p50 / p95 / max per source, measured from the completed write. Run: node --conditions=source bench/log-detection-latency.ts [n=50]
 */
import { execFileSync, spawnSync } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import type { Detection } from "../src/model.ts"
import { makeLogMonitors } from "../src/sources/index.ts"

const n = Number(process.argv[2] ?? 50)
const root = mkdtempSync(join(tmpdir(), "nodemend-latency-"))
mkdirSync(join(root, "proc"))
writeFileSync(join(root, "proc/stat"), `btime ${Math.floor(Date.now() / 1000) - 3600}\n`)
mkdirSync(join(root, "dev"))
writeFileSync(join(root, "dev/kmsg"), "")
mkdirSync(join(root, "var/log/aws-routed-eni"), { recursive: true })
writeFileSync(join(root, "var/log/aws-routed-eni/ipamd.log"), "")
mkdirSync(join(root, "var/log/journal"), { recursive: true })
const journalRemote = ["/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"].find(
  (p) => existsSync(p)
)
const hasJournal = journalRemote !== undefined && spawnSync("journalctl", ["--version"]).status === 0

const waiting = new Map<string, (at: number) => void>()
const onDetection = (d: Detection) => {
  const key = d.subject ?? d.message
  const resolve = waiting.get(key)
  if (resolve !== undefined) {
    waiting.delete(key)
    resolve(performance.now())
  }
}

const scope = await Effect.runPromise(Scope.make())
const monitors = await Effect.runPromise(Scope.provide(scope)(makeLogMonitors(root, {}, { onDetection })))
await new Promise((r) => setTimeout(r, 300))

const sample = async (name: string, write: (i: number) => string): Promise<void> => {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    let key = ""
    const done = new Promise<number>((resolve) => {
      key = write(-1 - i) // the key the Detection will carry (subject or message), registered before writing
      waiting.set(key, resolve)
    })
    // From the moment the write has completed (the journal writer is a separate process).
    write(i)
    const t0 = performance.now()
    const t1 = await Promise.race([done, new Promise<number>((r) => setTimeout(() => r(Number.NaN), 5000))])
    if (Number.isNaN(t1)) {
      waiting.delete(key)
      console.log(`${name}: sample ${i} timed out`)
      continue
    }
    ms.push(t1 - t0)
    await new Promise((r) => setTimeout(r, 20))
  }
  ms.sort((a, b) => a - b)
  const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(2)
  console.log(
    `${name.padEnd(34)} n=${ms.length}  p50 ${q(0.5)} ms  p95 ${q(0.95)} ms  max ${ms.at(-1)!.toFixed(2)} ms`
  )
}

let seq = 1000
// Negative i: only return the Detection key; i >= 0: write the line.
await sample("dev/kmsg (regular file) -> Detection", (i) => {
  const cpu = i < 0 ? -1 - i : i
  if (i >= 0)
    appendFileSync(
      join(root, "dev/kmsg"),
      `4,${++seq},${seq * 1000},-;watchdog: BUG: soft lockup - CPU#${cpu} stuck for 22s! [x:1]\n`
    )
  return `cpu${cpu}`
})
await sample("ipamd.log (file) -> Detection", (i) => {
  if (i >= 0)
    appendFileSync(
      join(root, "var/log/aws-routed-eni/ipamd.log"),
      `{"level":"error","ts":"${new Date().toISOString()}","msg":"InsufficientFreeAddressesInSubnet ${i}"}\n`
    )
  return "There are no available IP addresses for IPAMD to assign to pods"
})
if (hasJournal) {
  let file = 0
  await sample("journal (journalctl --follow) -> Detection", (i) => {
    const unit = `unit-${i < 0 ? -1 - i : i}.service`
    if (i >= 0) {
      const entry = `__REALTIME_TIMESTAMP=${Date.now() * 1000}\n__MONOTONIC_TIMESTAMP=1\n_BOOT_ID=0123456789abcdef0123456789abcdef\nSYSLOG_IDENTIFIER=systemd\nMESSAGE=Failed to start ${unit} - Test.\n\n`
      execFileSync(
        journalRemote!,
        [`--output=${join(root, "var/log/journal", `b-${++file}.journal`)}`, "-"],
        {
          input: entry,
          stdio: ["pipe", "ignore", "ignore"]
        }
      )
    }
    return unit
  })
} else console.log("journal: skipped (needs journalctl and systemd-journal-remote)")

const m = monitors.metrics()
console.log(`lines read ${m.linesRead}, detections ${m.detections}, dropped ${m.findingsDropped}`)
await Effect.runPromise(Scope.close(scope, Exit.void))
rmSync(root, { recursive: true, force: true })
