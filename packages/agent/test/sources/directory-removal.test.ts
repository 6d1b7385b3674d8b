/**
 * Log directories removed and created again under a running reader. An inotify watch follows the directory's
 * inode, not its path: before the fix, the `file:` tailer and the `podlogs:` reader kept watching the removed
 * directory and never read a line written to the new one (found by test/reliability/hostileSources.itest.ts).
 */
import { appendFileSync, mkdirSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type SourceLog, startFileTailer, startPodLogReader } from "../../src/sources/index.ts"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { makeTestHost, type TestHost } from "./host.ts"

const logs: { level: string; message: string }[] = []
const log: SourceLog = (level, message) => logs.push({ level, message })
let host: TestHost | undefined
afterEach(() => {
  host?.cleanup()
  host = undefined
  logs.length = 0
})
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("file tailer, its directory removed", () => {
  it("reads the file of a directory removed and created again, later or at once, or replaced by a rename", async () => {
    host = makeTestHost()
    const h = host
    const dir = join(h.root, "var/log/aws-routed-eni")
    const path = join(dir, "ipamd.log")
    h.appendFile("var/log/aws-routed-eni/ipamd.log", "history")
    const lines: string[] = []
    const tailer = startFileTailer({
      path,
      onLine: (l) => lines.push(l),
      onTruncatedLine: () => undefined,
      log
    })
    const write = (line: string) => h.appendFile("var/log/aws-routed-eni/ipamd.log", line)
    try {
      await tailer.ready
      write("before")
      await waitFor("a line before the removal", () => lines.includes("before"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      // Removed, back half a second later.
      rmSync(dir, { recursive: true })
      await sleep(500)
      write("after a removal")
      await waitFor("a line in the directory created again", () => lines.includes("after a removal"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      write("appended")
      await waitFor("an append to the new file", () => lines.includes("appended"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      // Removed and created again at once.
      rmSync(dir, { recursive: true })
      mkdirSync(dir)
      write("after an immediate re-creation")
      await waitFor("immediate re-creation", () => lines.includes("after an immediate re-creation"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      // Renamed away, a new directory in its place; a late write to the old one is still read (drained).
      renameSync(dir, `${dir}.old`)
      appendFileSync(join(`${dir}.old`, "ipamd.log"), "late write to the moved file\n")
      mkdirSync(dir)
      write("after a rename")
      await waitFor("a directory replaced by a rename", () => lines.includes("after a rename"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      expect(lines).not.toContain("history")
      expect(logs.some((l) => l.message.includes("log directory removed or replaced"))).toBe(true)
    } finally {
      await tailer.stop()
    }
  })
})

describe("pod log reader, its directories removed", () => {
  const pod = (hash: string) =>
    `var/log/pods/kube-system_kube-proxy-${hash}_0d1c2b3a-1111-2222-3333-444455556666`
  it("reads pods that appear after /var/log/pods was removed and created again, and a pod directory created again", async () => {
    host = makeTestHost()
    const h = host
    const lines: string[] = []
    const reader = await startPodLogReader({
      hostRoot: h.root,
      name: "kube-proxy",
      onLine: (l) => lines.push(l),
      onTruncatedLine: () => undefined,
      onWatching: () => undefined,
      log
    })
    try {
      h.appendFile(`${pod("aaaaa")}/kube-proxy/0.log`, "2025-01-01T00:00:00Z stderr F first")
      await waitFor("the first pod's log", () => lines.some((l) => l.endsWith("first")), {
        timeoutMs: 5000,
        intervalMs: 10
      })
      rmSync(join(h.root, "var/log/pods"), { recursive: true })
      await sleep(500)
      h.appendFile(`${pod("bbbbb")}/kube-proxy/0.log`, "2025-01-01T00:01:00Z stderr F new pods directory")
      await waitFor(
        "a pod in the new pods directory",
        () => lines.some((l) => l.endsWith("new pods directory")),
        { timeoutMs: 5000, intervalMs: 10 }
      )
      // Removed and created again at once.
      rmSync(join(h.root, "var/log/pods"), { recursive: true })
      h.appendFile(`${pod("ccccc")}/kube-proxy/0.log`, "2025-01-01T00:02:00Z stderr F at once")
      await waitFor("immediate re-creation", () => lines.some((l) => l.endsWith("at once")), {
        timeoutMs: 5000,
        intervalMs: 10
      })
      // The same pod directory removed and created again, then a container restart in it.
      rmSync(join(h.root, pod("ccccc")), { recursive: true })
      h.appendFile(`${pod("ccccc")}/kube-proxy/0.log`, "2025-01-01T00:03:00Z stderr F same pod again")
      await waitFor("the pod directory again", () => lines.some((l) => l.endsWith("same pod again")), {
        timeoutMs: 5000,
        intervalMs: 10
      })
      h.appendFile(`${pod("ccccc")}/kube-proxy/1.log`, "2025-01-01T00:04:00Z stderr F restarted")
      await waitFor("a restart in the pod directory", () => lines.some((l) => l.endsWith("restarted")), {
        timeoutMs: 5000,
        intervalMs: 10
      })
      // Each line once, in order: nothing lost across the removals, nothing read twice from a re-created directory.
      expect(lines).toEqual([
        "2025-01-01T00:00:00Z stderr F first",
        "2025-01-01T00:01:00Z stderr F new pods directory",
        "2025-01-01T00:02:00Z stderr F at once",
        "2025-01-01T00:03:00Z stderr F same pod again",
        "2025-01-01T00:04:00Z stderr F restarted"
      ])
    } finally {
      await reader.stop()
    }
  })
})
