/**
 * The journal reader on lines of every shape journalctl's JSON can take, from a stand-in journalctl that prints
 * them (the real journalctl and systemd-journal-remote are in sources.test.ts): the fast path (journal-json.ts)
 * and the lines it leaves to JSON.parse give the entries, malformed lines are counted, nothing else stops it.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startJournalReader } from "../../src/sources/journal-reader.ts"
import { waitFor } from "@nodemend/cluster-harness/waitFor"

let root: string | undefined
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true })
  root = undefined
})

/** A host root with a journal directory, and a journalctl that prints `lines` and then waits. */
const standIn = (lines: readonly string[]) => {
  root = mkdtempSync(join(tmpdir(), "nodemend-journal-"))
  mkdirSync(join(root, "var/log/journal"), { recursive: true })
  writeFileSync(join(root, "lines.json"), `${lines.join("\n")}\n`)
  const journalctl = join(root, "journalctl")
  writeFileSync(journalctl, `#!/bin/sh\ncat '${join(root, "lines.json")}'\nexec sleep 600\n`)
  chmodSync(journalctl, 0o755)
  return { hostRoot: root, journalctl }
}

const entry = (fields: Record<string, unknown>) =>
  JSON.stringify({
    __CURSOR: "s=1;i=1",
    __REALTIME_TIMESTAMP: "1765000000123456",
    __MONOTONIC_TIMESTAMP: "1000",
    SYSLOG_IDENTIFIER: "kubelet",
    ...fields
  })

describe("journal reader: journalctl's JSON lines", () => {
  it("delivers each entry once, whatever its shape, and counts the lines that are not JSON", async () => {
    const lines = [
      entry({ MESSAGE: 'E1101 "Error syncing pod" err="failed to \\"StartContainer\\""' }),
      entry({ MESSAGE: [104, 195, 169] }), // not UTF-8 for journalctl: printed as bytes
      "not json",
      "null",
      "[1,2]",
      entry({ SYSLOG_IDENTIFIER: "containerd", MESSAGE: "not subscribed" }),
      entry({ MESSAGE: "with a repeated field", _PID: ["1", "2"] }),
      `{ "SYSLOG_IDENTIFIER": "kubelet", "MESSAGE": "spaced", "__REALTIME_TIMESTAMP": "2000" }`,
      entry({ MESSAGE: "last" })
    ]
    const got: [string, string, number][] = []
    let malformed = 0
    const reader = await startJournalReader({
      ...standIn(lines),
      identifiers: ["kubelet"],
      onEntry: (ident, message, at) => got.push([ident, message, at]),
      onMalformed: () => malformed++,
      onTruncatedLine: () => undefined,
      onWatching: () => undefined,
      log: () => undefined,
      now: () => 42
    })
    try {
      await waitFor("the last entry", () => got.at(-1)?.[1] === "last", { timeoutMs: 10_000, intervalMs: 10 })
      expect(got).toEqual([
        ["kubelet", 'E1101 "Error syncing pod" err="failed to \\"StartContainer\\""', 1765000000123],
        ["kubelet", "hé", 1765000000123],
        ["kubelet", "with a repeated field", 1765000000123],
        ["kubelet", "spaced", 2],
        ["kubelet", "last", 1765000000123]
      ])
      expect(malformed).toBe(1)
      expect(reader.counts.linesRead).toBe(lines.length)
    } finally {
      await reader.stop()
    }
  })
})
