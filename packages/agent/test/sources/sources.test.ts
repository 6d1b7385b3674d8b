import {
  accessSync,
  appendFileSync,
  constants,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync
} from "node:fs"
import { dirname, join } from "node:path"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import {
  lineTimestamp,
  makeLineSplitter,
  parseKmsgRecord,
  type SourceLog,
  startFileTailer,
  startJournalReader,
  startKmsgReader,
  LOG_READERS,
  startLogHub,
  startPodLogReader,
  UnknownLogReader
} from "../../src/sources/index.ts"
import type { LogSourceId } from "../../src/rules/rule.ts"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { it as itEffect } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { BOOT_SECONDS, CAN_WRITE_JOURNAL, makeTestHost, type TestHost } from "./host.ts"

const logs: { level: string; message: string }[] = []
const log: SourceLog = (level, message) => logs.push({ level, message })
let host: TestHost | undefined
afterEach(() => {
  host?.cleanup()
  host = undefined
  logs.length = 0
})

describe("parseKmsgRecord", () => {
  it("parses header, text escapes and dictionary continuation lines", () => {
    const r = parseKmsgRecord(
      "6,339,5140900,-;NET: Registered protocol family 10\\x0a\n SUBSYSTEM=net\n DEVICE=+net:eth0"
    )
    expect(r).toEqual({
      level: 6,
      facility: 0,
      seq: 339,
      usecSinceBoot: 5140900,
      flags: "-",
      text: "NET: Registered protocol family 10\n",
      dictionary: { SUBSYSTEM: "net", DEVICE: "+net:eth0" }
    })
    expect(parseKmsgRecord("12,1,2,c,extra;x")).toMatchObject({
      level: 4,
      facility: 1,
      flags: "c",
      text: "x"
    })
  })
  it("rejects lines that are not records", () => {
    for (const bad of ["no semicolon", "a,b,c;text", "6,1;x", "-1,2,3,-;x"])
      expect(parseKmsgRecord(bad)).toBeUndefined()
  })
  it("property: any record the kernel could write parses back", () => {
    fc.assert(
      fc.property(
        fc.nat(191),
        fc.nat(),
        fc.nat(),
        fc.string({ unit: "grapheme" }),
        (prio, seq, usec, text) => {
          // As the kernel does: every byte < 0x20, >= 0x7f and the backslash becomes \xNN.
          const escaped = [...Buffer.from(text, "utf8")]
            .map((b) =>
              b < 0x20 || b >= 0x7f || b === 0x5c
                ? `\\x${b.toString(16).padStart(2, "0")}`
                : String.fromCharCode(b)
            )
            .join("")
          const r = parseKmsgRecord(`${prio},${seq},${usec},-;${escaped}`)
          expect(r).toMatchObject({ level: prio & 7, facility: prio >> 3, seq, usecSinceBoot: usec, text })
        }
      )
    )
  })
})

describe("lineTimestamp", () => {
  const now = Date.UTC(2026, 10, 30, 12, 0, 0)
  it("reads zap ts, RFC 3339 prefixes and syslog prefixes", () => {
    expect(lineTimestamp('{"level":"info","ts":"2025-03-24T06:01:36.088Z","msg":"x"}', now)).toBe(
      Date.parse("2025-03-24T06:01:36.088Z")
    )
    expect(lineTimestamp("2022-11-01T06:38:40.581547000Z stderr F E1101 x", now)).toBe(
      Date.parse("2022-11-01T06:38:40.581Z")
    )
    expect(new Date(lineTimestamp("Nov 30 05:17:01 host CRON[1]: x", now)).getMonth()).toBe(10)
    expect(new Date(lineTimestamp("Dec 31 23:59:59 host x", Date.UTC(2027, 0, 1, 0, 5))).getFullYear()).toBe(
      2026
    )
    expect(lineTimestamp("no time here", now)).toBe(now)
  })
})

describe("line splitter", () => {
  it("splits chunks, joins partial lines and cuts overlong ones", () => {
    const lines: string[] = []
    let cut = 0
    const s = makeLineSplitter(
      (l) => lines.push(l),
      () => cut++,
      8
    )
    s.push(Buffer.from("ab\ncd"))
    s.push(Buffer.from("e\r\n0123456789abcdef"))
    s.push(Buffer.from("ghij\nok\n"))
    s.push(Buffer.from([0xe2, 0x82]))
    s.push(Buffer.from([0xac, 0x0a]))
    expect(lines).toEqual(["ab", "cde", "01234567", "ok", "€"])
    expect(cut).toBe(1)
  })
})

describe("line splitter property", () => {
  it("property: any chunking of a text yields its lines (all under the bound)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 30 }), { maxLength: 20 }),
        fc.array(fc.nat(40), { maxLength: 10 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l.replace(/[\r\n]/g, "")}\n`).join(""), "utf8")
          const got: string[] = []
          const s = makeLineSplitter(
            (l) => got.push(l),
            () => undefined,
            1 << 20
          )
          let at = 0
          for (const c of cuts) {
            const end = Math.min(bytes.length, at + c)
            s.push(bytes.subarray(at, end))
            at = end
          }
          s.push(bytes.subarray(at))
          s.flush()
          expect(got).toEqual(lines.map((l) => l.replace(/[\r\n]/g, "")))
        }
      )
    )
  })
})

describe("kmsg reader on a regular file", () => {
  it("stamps boot time + usec, skips dictionary lines, counts sequence gaps and malformed records", async () => {
    host = makeTestHost()
    host.appendKmsg("old record before start", { seq: 1 })
    const got: { text: string; at: number }[] = []
    let gaps = 0
    let malformed = 0
    const reader = await startKmsgReader({
      hostRoot: host.root,
      onRecord: (text, at) => got.push({ text, at }),
      onTruncatedLine: () => undefined,
      onSequenceGap: (n) => {
        gaps += n
      },
      onMalformed: () => malformed++,
      onWatching: () => undefined,
      log
    })
    try {
      host.appendKmsg("first", {
        seq: 10,
        usec: 2_500_000,
        dictionary: { SUBSYSTEM: "pci", DEVICE: "+pci:0000:3b:00.0" }
      })
      host.appendKmsg("second", { seq: 11, usec: 2_600_000 })
      host.appendKmsg("after a gap", { seq: 15, usec: 2_700_000 })
      appendFileSync(join(host.root, "dev/kmsg"), "garbage without header\n")
      await waitFor("records", () => got.length === 4, { timeoutMs: 5000, intervalMs: 10 })
      expect(got.map((g) => g.text)).toEqual(["first", "second", "after a gap", "garbage without header"])
      expect(got[0]!.at).toBe(BOOT_SECONDS * 1000 + 2500)
      expect(gaps).toBe(3)
      expect(malformed).toBe(1)
      expect(logs.some((l) => l.message.includes("sequence gap"))).toBe(true)
    } finally {
      await reader.stop()
    }
  })
})

describe("kmsg reader under a burst", () => {
  it("delivers every record of a burst in order, with no gap counted", async () => {
    host = makeTestHost()
    const got: string[] = []
    let gaps = 0
    const reader = await startKmsgReader({
      hostRoot: host.root,
      onRecord: (text) => got.push(text),
      onTruncatedLine: () => undefined,
      onSequenceGap: (n) => {
        gaps += n
      },
      onMalformed: () => undefined,
      onWatching: () => undefined,
      log
    })
    try {
      for (let i = 0; i < 3000; i++) host.appendKmsg(`record ${i}`)
      await waitFor("burst", () => got.length === 3000, { timeoutMs: 10_000, intervalMs: 10 })
      expect(got.every((t, i) => t === `record ${i}`)).toBe(true)
      expect(gaps).toBe(0)
    } finally {
      await reader.stop()
    }
  }, 20_000)
})

let kmsgReadable = false
try {
  accessSync("/dev/kmsg", constants.R_OK)
  kmsgReadable = true
} catch {}

describe.skipIf(!kmsgReadable)("kmsg reader on the real character device", () => {
  it("reads one record per read() and delivers a line written to /dev/kmsg", async (ctx) => {
    const got: string[] = []
    let watching: boolean | undefined
    let malformed = 0
    const reader = await startKmsgReader({
      hostRoot: "/",
      onRecord: (text) => got.push(text),
      onTruncatedLine: () => undefined,
      onSequenceGap: () => undefined,
      onMalformed: () => malformed++,
      onWatching: (w) => {
        watching = w
      },
      log,
      lookbackMs: Number.POSITIVE_INFINITY
    })
    try {
      // The ring buffer holds at least the boot messages, unless this container may not read it.
      await waitFor("ring buffer records", () => got.length > 0 || watching === false, {
        timeoutMs: 5000,
        intervalMs: 10
      })
      if (got.length === 0) ctx.skip("this container may not read /dev/kmsg")
      // One record per read(): every one parsed as a whole record, none split or run together.
      expect(malformed).toBe(0)
      // (A record's own text may hold a newline the kernel escaped, "\x0a": amd_pstate prints one at boot; and a
      // printk of a bare newline is an empty record. Neither is a split: a split leaves a piece without a header.)
      expect(got.filter((t) => /\n\d+,\d+,\d+,[^;]*;/.test(t))).toEqual([])
      const marker = `nodemend-kmsg-test ${process.pid} ${Date.now()}`
      try {
        writeFileSync("/dev/kmsg", `<6>${marker}\n`)
      } catch (e) {
        // Reading was tested; the write is not: say so instead of passing.
        ctx.skip(`writing to /dev/kmsg is not allowed here: ${(e as Error).message}`)
      }
      const written = await waitFor(
        "written record",
        () => {
          const w = got.filter((t) => t.includes(marker))
          return w.length > 0 ? w : undefined
        },
        { timeoutMs: 5000, intervalMs: 10 }
      )
      // Delivered once, as the text written (the priority prefix is the record's header, not its text).
      await new Promise((r) => setTimeout(r, 100))
      expect(got.filter((t) => t.includes(marker))).toEqual([marker])
      expect(written).toEqual([marker])
    } finally {
      await reader.stop()
    }
  })
})

/** Tails `path` into `lines`, ignoring overlong lines. */
const tailInto = (path: string, lines: string[]) =>
  startFileTailer({ path, onLine: (l) => lines.push(l), onTruncatedLine: () => undefined, log })

describe("file tailer", () => {
  it("follows appends, rotation by rename, truncation, and a file created later", async () => {
    host = makeTestHost()
    const path = join(host.root, "var/log/app.log")
    const lines: string[] = []
    const watching: boolean[] = []
    const tailer = startFileTailer({
      path,
      onLine: (l) => lines.push(l),
      onTruncatedLine: () => undefined,
      onWatching: (w) => watching.push(w),
      log
    })
    try {
      await tailer.ready
      host.appendFile("var/log/app.log", "created after start")
      await waitFor("created file", () => lines.includes("created after start"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      host.appendFile("var/log/app.log", "one")
      await waitFor("append", () => lines.includes("one"), { timeoutMs: 3000, intervalMs: 10 })
      renameSync(path, `${path}.1`)
      appendFileSync(`${path}.1`, "late write to the rotated file\n")
      host.appendFile("var/log/app.log", "new file")
      await waitFor("rotation", () => lines.includes("new file"), { timeoutMs: 3000, intervalMs: 10 })
      // copytruncate: a truncation is seen as the size dropping below the read offset (as with tail -F,
      // a truncation overwritten by more bytes before it is noticed reads like an append).
      truncateSync(path, 0)
      await tailer.poke()
      host.appendFile("var/log/app.log", "after truncate")
      await waitFor("truncation", () => lines.includes("after truncate"), { timeoutMs: 3000, intervalMs: 10 })
      expect(lines).toContain("late write to the rotated file")
      expect(watching[0]).toBe(false)
      expect(watching).toContain(true)
    } finally {
      await tailer.stop()
    }
  })
  it("waits for a missing directory and reads a file created in it", async () => {
    host = makeTestHost()
    const path = join(host.root, "var/log/aws-routed-eni/ipamd.log")
    const lines: string[] = []
    const tailer = tailInto(path, lines)
    try {
      await tailer.ready
      expect(existsSync(dirname(path))).toBe(false)
      host.appendFile("var/log/aws-routed-eni/ipamd.log", "first line of a new directory")
      await waitFor("file in a new directory", () => lines.includes("first line of a new directory"), {
        timeoutMs: 3000,
        intervalMs: 10
      })
      expect(lines).toEqual(["first line of a new directory"])
    } finally {
      await tailer.stop()
    }
  })

  it("loses no line across bursts of appends and rotations", async () => {
    host = makeTestHost()
    const path = join(host.root, "var/log/burst.log")
    host.appendFile("var/log/burst.log", "history")
    const lines: string[] = []
    const tailer = tailInto(path, lines)
    try {
      await tailer.ready
      let n = 0
      for (let rotation = 0; rotation < 5; rotation++) {
        // Many small appends in one burst, then a rename-and-create rotation once they have been read.
        for (let i = 0; i < 400; i++) appendFileSync(path, `line ${n++}\n`)
        await waitFor(`burst ${rotation}`, () => lines.length === n, { timeoutMs: 20_000, intervalMs: 10 })
        renameSync(path, `${path}.${rotation}`)
        appendFileSync(`${path}.${rotation}`, `line ${n++}\n`) // late write to the rotated file
      }
      for (let i = 0; i < 10; i++) appendFileSync(path, `line ${n++}\n`)
      await waitFor("tail", () => lines.length === n, { timeoutMs: 20_000, intervalMs: 10 })
      expect(lines).toEqual(Array.from({ length: n }, (_, i) => `line ${i}`))
    } finally {
      await tailer.stop()
    }
  })
  it("starts at the end of an existing file", async () => {
    host = makeTestHost()
    host.appendFile("var/log/x.log", "history")
    const lines: string[] = []
    const tailer = tailInto(join(host.root, "var/log/x.log"), lines)
    try {
      await tailer.ready
      host.appendFile("var/log/x.log", "new")
      await waitFor("new line", () => lines.length > 0, { timeoutMs: 5000, intervalMs: 10 })
      expect(lines).toEqual(["new"])
    } finally {
      await tailer.stop()
    }
  })
})

describe("pod log reader", () => {
  it("picks up pods and container restarts that appear after start", async () => {
    host = makeTestHost()
    const lines: string[] = []
    const reader = await startPodLogReader({
      hostRoot: host.root,
      name: "kube-proxy",
      onLine: (l) => lines.push(l),
      onTruncatedLine: () => undefined,
      onWatching: () => undefined,
      log
    })
    try {
      host.appendPodLog("kube-proxy", "2025-01-01T00:00:00Z stderr F first")
      await waitFor("first pod log", () => lines.includes("2025-01-01T00:00:00Z stderr F first"), {
        timeoutMs: 5000,
        intervalMs: 10
      })
      host.appendFile(
        "var/log/pods/kube-system_kube-proxy-7x2kq_0d1c2b3a-1111-2222-3333-444455556666/kube-proxy/1.log",
        "2025-01-01T00:01:00Z stderr F after restart"
      )
      host.appendFile(
        "var/log/pods/kube-system_coredns-1_2/coredns/0.log",
        "2025-01-01T00:01:00Z stderr F not ours"
      )
      await waitFor(
        "restarted container",
        () => lines.includes("2025-01-01T00:01:00Z stderr F after restart"),
        { timeoutMs: 5000, intervalMs: 10 }
      )
      expect(lines.some((l) => l.includes("not ours"))).toBe(false)
    } finally {
      await reader.stop()
    }
  })
})

/** Journal reader options: kubelet's entries, each dropped; malformed and overlong lines ignored. */
const kubeletJournalOptions = {
  identifiers: ["kubelet"],
  onEntry: () => undefined,
  onMalformed: () => undefined,
  onTruncatedLine: () => undefined,
  log
}
/** Starts a kubelet journal reader on `hostRoot` that collects each entry's message in `got`. */
const readKubeletJournal = (hostRoot: string, got: string[]) =>
  startJournalReader({
    ...kubeletJournalOptions,
    hostRoot,
    onEntry: (_ident, message) => got.push(message),
    onWatching: () => undefined
  })

describe("journal reader", () => {
  it("is not watching when journalctl is missing", async () => {
    host = makeTestHost()
    const watching: boolean[] = []
    const reader = await startJournalReader({
      ...kubeletJournalOptions,
      hostRoot: host.root,
      journalctl: "/nonexistent/journalctl",
      onWatching: (w) => watching.push(w)
    })
    await waitFor("status", () => watching.length > 0, { timeoutMs: 5000, intervalMs: 10 })
    expect(watching).toEqual([false])
    expect(logs.some((l) => l.message.includes("journalctl not found"))).toBe(true)
    await reader.stop()
  })
  it("is not watching when the host has no journal directory", async () => {
    const watching: boolean[] = []
    const reader = await startJournalReader({
      ...kubeletJournalOptions,
      hostRoot: "/nonexistent-host",
      onWatching: (w) => watching.push(w)
    })
    expect(watching).toEqual([false])
    await reader.stop()
  })
  it.skipIf(!CAN_WRITE_JOURNAL)(
    "delivers MESSAGE and __REALTIME_TIMESTAMP of matching identifiers",
    async () => {
      host = makeTestHost()
      const got: { ident: string; message: string; at: number }[] = []
      const reader = await startJournalReader({
        ...kubeletJournalOptions,
        identifiers: ["kubelet", "systemd"],
        hostRoot: host.root,
        onEntry: (ident, message, at) => got.push({ ident, message, at }),
        onWatching: () => undefined
      })
      try {
        const at = Date.now() + 1000
        host.writeJournal([
          { identifier: "kubelet", message: "hello", realtimeMs: at },
          { identifier: "containerd", message: "not subscribed", realtimeMs: at },
          { identifier: "systemd", message: "Started x.", realtimeMs: at }
        ])
        await waitFor("journal entries", () => got.length === 2, { timeoutMs: 10_000, intervalMs: 10 })
        expect(got).toEqual([
          { ident: "kubelet", message: "hello", at },
          { ident: "systemd", message: "Started x.", at }
        ])
      } finally {
        await reader.stop()
      }
    },
    20_000
  )
})

describe.skipIf(!CAN_WRITE_JOURNAL)("journal reader on real host layouts", () => {
  it("reads machine-id subdirectories, and run/log/journal when var/log/journal is absent", async () => {
    host = makeTestHost()
    rmSync(join(host.root, "var/log/journal"), { recursive: true })
    mkdirSync(join(host.root, "run/log/journal"), { recursive: true })
    const got: string[] = []
    const reader = await readKubeletJournal(host.root, got)
    try {
      host.writeJournal([{ identifier: "kubelet", message: "volatile journal" }], {
        dir: "run/log/journal/0123456789abcdef0123456789abcdef"
      })
      await waitFor("entry", () => got.length === 1, { timeoutMs: 10_000, intervalMs: 10 })
      expect(got).toEqual(["volatile journal"])
    } finally {
      await reader.stop()
    }
  }, 20_000)
})

describe.skipIf(!CAN_WRITE_JOURNAL)("journal reader restarts", () => {
  it("restarts journalctl after its last cursor: nothing lost, nothing repeated", async () => {
    host = makeTestHost()
    const got: string[] = []
    const reader = await readKubeletJournal(host.root, got)
    try {
      host.writeJournal([{ identifier: "kubelet", message: "before the crash" }])
      await waitFor("first entry", () => got.length === 1, { timeoutMs: 10_000, intervalMs: 10 })
      const pid = reader.pid()
      expect(pid).toBeDefined()
      process.kill(pid!, "SIGKILL")
      host.writeJournal([{ identifier: "kubelet", message: "while it was down" }])
      await waitFor("entry after restart", () => got.length === 2, { timeoutMs: 10_000, intervalMs: 10 })
      expect(got).toEqual(["before the crash", "while it was down"])
      expect(reader.pid()).not.toBe(pid)
      expect(logs.some((l) => l.message.includes("journalctl exited; restarting"))).toBe(true)
    } finally {
      await reader.stop()
    }
  }, 25_000)
})

describe("log hub", () => {
  it("shares one reader per source among subscribers and counts lines", async () => {
    host = makeTestHost()
    const hub = await startLogHub({ hostRoot: host.root, sources: ["dmesg", "dmesg"], log })
    try {
      const a: string[] = []
      const b: string[] = []
      hub.subscribe("dmesg", (r) => a.push(r.text))
      const unsubscribe = hub.subscribe("dmesg", (r) => b.push(r.text))
      host.appendKmsg("x")
      await waitFor("both subscribers", () => a.length === 1 && b.length === 1, {
        timeoutMs: 5000,
        intervalMs: 10
      })
      unsubscribe()
      host.appendKmsg("y")
      await waitFor("first subscriber", () => a.length === 2, { timeoutMs: 5000, intervalMs: 10 })
      expect(b).toEqual(["x"])
      expect(hub.counters().dmesg?.linesRead).toBe(2)
      expect(hub.status().dmesg).toBe("watching")
      expect(() => hub.subscribe("journal:nope", () => undefined)).toThrow()
    } finally {
      await hub.stop()
    }
  })
  it("opens each source through the reader its id names, and refuses a source whose name no reader has", async () => {
    host = makeTestHost()
    expect(Object.keys(LOG_READERS)).toEqual(["dmesg", "journal", "file", "podlogs"])
    const opened = await startLogHub({ hostRoot: host.root, sources: ["dmesg"], log }).then(
      (h) => h,
      (e: unknown) => e
    )
    expect(opened).not.toBeInstanceOf(Error)
    await (opened as Awaited<ReturnType<typeof startLogHub>>).stop()
    const refused = await startLogHub({
      hostRoot: host.root,
      sources: ["file:/var/log/a.log", "syslog:/var/log/messages" as LogSourceId],
      log
    }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(refused).toBeInstanceOf(UnknownLogReader)
    expect((refused as UnknownLogReader).source).toBe("syslog:/var/log/messages")
    expect((refused as UnknownLogReader).message).toContain('unknown log reader "syslog"')
  })
  it.skipIf(!CAN_WRITE_JOURNAL)(
    "reads every journal source through one journalctl: entries counted per identifier, its bytes on the first",
    async () => {
      host = makeTestHost()
      const sources: LogSourceId[] = ["journal:kubelet", "dmesg", "journal:systemd"]
      const hub = await startLogHub({ hostRoot: host.root, sources, log })
      try {
        const got: string[] = []
        for (const s of sources) hub.subscribe(s, (r) => got.push(`${r.source} ${r.text}`))
        const at = Date.now() + 1000
        host.writeJournal([
          { identifier: "kubelet", message: "one", realtimeMs: at },
          { identifier: "systemd", message: "two", realtimeMs: at },
          { identifier: "kubelet", message: "three", realtimeMs: at }
        ])
        await waitFor("three entries", () => got.length === 3, { timeoutMs: 10_000, intervalMs: 20 })
        expect(got).toEqual(["journal:kubelet one", "journal:systemd two", "journal:kubelet three"])
        const c = hub.counters()
        expect([c["journal:kubelet"]?.linesRead, c["journal:systemd"]?.linesRead]).toEqual([2, 1])
        expect(c["journal:kubelet"]?.bytesRead).toBeGreaterThan(0)
        expect(c["journal:systemd"]?.bytesRead).toBe(0)
        expect(c.dmesg?.linesRead).toBe(0)
        expect(hub.status()).toEqual({
          "journal:kubelet": "watching",
          dmesg: "watching",
          "journal:systemd": "watching"
        })
      } finally {
        await hub.stop()
      }
    },
    15_000
  )
  it("cuts an overlong line, matches its head, counts and logs the cut", async () => {
    host = makeTestHost()
    host.appendFile("var/log/big.log", "start")
    const hub = await startLogHub({ hostRoot: host.root, sources: ["file:/var/log/big.log"], log })
    try {
      const got: string[] = []
      hub.subscribe("file:/var/log/big.log", (r) => got.push(r.text))
      host.appendFile("var/log/big.log", `HEAD ${"x".repeat(70 * 1024)}`)
      host.appendFile("var/log/big.log", "next")
      await waitFor("lines", () => got.length === 2, { timeoutMs: 5000, intervalMs: 10 })
      expect(got[0]!.startsWith("HEAD ")).toBe(true)
      expect(got[0]!.length).toBe(64 * 1024)
      expect(got[1]).toBe("next")
      expect(hub.counters()["file:/var/log/big.log"]?.linesTruncated).toBe(1)
      // Counted by the tailer's line source: both lines, and every byte after the start position.
      expect(hub.counters()["file:/var/log/big.log"]?.linesRead).toBe(2)
      expect(hub.counters()["file:/var/log/big.log"]?.bytesRead).toBe(5 + 70 * 1024 + 1 + 5)
      expect(logs.some((l) => l.message.includes("longer than the line bound"))).toBe(true)
    } finally {
      await hub.stop()
    }
  })
})

describe("log hub time", () => {
  // The agent gives the hub its Clock (log-monitors.ts); here a TestClock, so the minute is virtual.
  itEffect.effect("logs cut lines at most once a minute per source, by the Clock it is given", () =>
    Effect.gen(function* () {
      const h = makeTestHost()
      host = h
      const path = "file:/var/log/big.log"
      h.appendFile("var/log/big.log", "start")
      const clock = yield* Clock.Clock
      const hub = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startLogHub({ hostRoot: h.root, sources: [path], log, now: () => clock.currentTimeMillisUnsafe() })
        ),
        (opened) => Effect.promise(() => opened.stop())
      )
      const got: string[] = []
      hub.subscribe(path, (r) => got.push(r.text))
      const cutLogs = () => logs.filter((l) => l.message.includes("longer than the line bound")).length
      const appendOverlong = (n: number) =>
        Effect.promise(async () => {
          h.appendFile("var/log/big.log", `HEAD ${"x".repeat(70 * 1024)}`)
          await waitFor(`line ${n}`, () => got.length === n, { timeoutMs: 5000, intervalMs: 10 })
        })
      yield* appendOverlong(1)
      expect(cutLogs()).toBe(1)
      yield* TestClock.adjust("59 seconds")
      yield* appendOverlong(2)
      expect(cutLogs()).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* appendOverlong(3)
      expect(cutLogs()).toBe(2)
      expect(hub.counters()[path]?.linesTruncated).toBe(3)
    })
  )
})
