/**
 * End to end through the real pipeline: fixture lines are written to their source under a temporary
 * host root (dev/kmsg records, log files, pod logs, journal files), read by the shared readers, matched
 * by the rule engine and delivered as Detections by makeLogMonitors.
 */
import { it as itEffect } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { PrometheusMetrics } from "effect/observability"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Detection, Finding } from "../../src/model.ts"
import { makeLogRuleEngine } from "../../src/rules/index.ts"
import { type LogMonitors, LogMonitorsService, makeLogMonitors } from "../../src/sources/index.ts"
import { BENIGN_LINES, FAULT_LINES, RESOLVE_LINES } from "../fixtures/log-lines.ts"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { CAN_WRITE_JOURNAL, makeTestHost, openScoped, type TestHost } from "./host.ts"

const usable = <T extends { source: string }>(xs: readonly T[]) =>
  xs.filter((x) => CAN_WRITE_JOURNAL || !x.source.startsWith("journal:"))

describe("log pipeline: fixtures through readers, matcher and monitors", () => {
  let host: TestHost
  let monitors: LogMonitors
  let close: () => Promise<void>
  const seen: Detection[] = []
  const cleared: Finding[] = []

  beforeAll(async () => {
    if (!CAN_WRITE_JOURNAL)
      console.warn(
        "journal-sourced fixtures are not run: install systemd-journal-remote (Debian) and journalctl to cover them"
      )
    host = makeTestHost()
    // History already on the host when the agent starts is not replayed.
    host.appendKmsg("BUG: kernel NULL pointer dereference, address: 0000000000000008")
    host.appendFile("var/log/aws-routed-eni/ipamd.log", '{"msg":"InsufficientFreeAddressesInSubnet (old)"}')
    const opened = await openScoped(
      makeLogMonitors(
        host.root,
        {},
        {
          onDetection: (d) => seen.push(d),
          onFinding: (f) => {
            if (f._tag === "Resolution") cleared.push(f)
          }
        }
      )
    )
    monitors = opened.value
    close = opened.close
    await waitFor("sources to start", () => Object.values(monitors.status()).every((s) => s !== "starting"), {
      timeoutMs: 10_000,
      intervalMs: 10
    })
  }, 20_000)
  afterAll(async () => {
    await close?.()
    host?.cleanup()
  })

  it("reports every source as watching", () => {
    const status = monitors.status()
    for (const [source, s] of Object.entries(status)) {
      if (source.startsWith("journal:") && !CAN_WRITE_JOURNAL) continue
      // Files that do not exist yet are waited for: not watching until they appear.
      if (source.startsWith("file:") || source.startsWith("podlogs:")) continue
      expect(s, source).toBe("watching")
    }
  })

  it("turns every fault fixture into its Detection and keeps benign lines silent", async () => {
    const engine = makeLogRuleEngine()
    for (const b of usable(BENIGN_LINES)) host.append(b.source, b.text)
    const journalBatch: { identifier: string; message: string }[] = []
    const expected: { reason: string; subject: string | undefined }[] = []
    for (const f of usable(FAULT_LINES)) {
      const times = Math.max(1, ...engine.matcher.match(f.source, f.text).map((m) => m.minOccurrences))
      for (let i = 0; i < times; i++) {
        if (f.source.startsWith("journal:"))
          journalBatch.push({ identifier: f.source.slice(8), message: f.text })
        else host.append(f.source, f.text)
      }
      expected.push({ reason: f.reason, subject: f.subject })
    }
    if (journalBatch.length > 0) host.writeJournal(journalBatch)
    const has = (e: (typeof expected)[number]) =>
      seen.some((d) => d.reason === e.reason && (e.subject === undefined || d.subject === e.subject))
    await waitFor("all fixture detections", () => expected.every(has), {
      timeoutMs: 15_000,
      intervalMs: 10
    }).catch((err) => {
      const missing = expected.filter((e) => !has(e))
      throw new Error(`${err.message}: missing ${JSON.stringify(missing)}`)
    })
    // Nothing but the expected (reason, subject) pairs: no benign line fired, history was not replayed.
    const allowed = new Set(usable(FAULT_LINES).map((f) => f.reason))
    for (const d of seen) expect(allowed.has(d.reason), `${d.reason} ${d.subject} ${d.message}`).toBe(true)
    expect(seen.filter((d) => d.subject === "sr0" || d.subject === "loop3")).toEqual([])
    expect(seen.filter((d) => d.reason === "IPAMDNoIPs")).toHaveLength(1)
    const bugs = seen.filter((d) => d.reason === "KernelBug")
    expect(bugs).toHaveLength(usable(FAULT_LINES).filter((f) => f.reason === "KernelBug").length)
    // Kernel records are stamped boot time + their monotonic microseconds.
    const xid = seen.find((d) => d.reason === "NvidiaXID79Error")!
    expect(xid.subject).toBe("0000:44:00")
    expect(xid.observedAtMs).toBeGreaterThan(1_700_000_000_000)
    expect(xid.observedAtMs).toBeLessThan(1_700_000_000_000 + 3_600_000)
    const m = monitors.metrics()
    expect(m.linesRead).toBeGreaterThan(FAULT_LINES.length)
    expect(m.findingsDropped).toBe(0)
  }, 30_000)

  it("turns a clearing line into a Resolution", async () => {
    for (const l of usable(RESOLVE_LINES)) host.append(l.source, l.text)
    await waitFor("resolutions", () => cleared.length === usable(RESOLVE_LINES).length, {
      timeoutMs: 10_000,
      intervalMs: 10
    })
    expect(cleared.map((f) => f.reason)).toEqual(usable(RESOLVE_LINES).map((l) => l.reason))
    expect(monitors.metrics().resolutions).toBe(cleared.length)
  }, 20_000)

  it("exposes the source counters as Prometheus series", async () => {
    const text = await Effect.runPromise(PrometheusMetrics.format())
    const read = /nodemend_agent_log_lines_read_total\{source="dmesg"\} (\d+)/.exec(text)
    expect(Number(read?.[1])).toBe(monitors.metrics().bySource.dmesg?.linesRead)
    expect(text).toMatch(/nodemend_agent_kmsg_sequence_gaps_total\{source="dmesg"\} 0/)
    expect(text).toMatch(/nodemend_agent_log_findings_dropped_total 0/)
  })

  it("streams Detections: a line appended to dev/kmsg comes out of the Stream", async () => {
    const fiber = Effect.runFork(
      monitors.detections.pipe(
        Stream.filter((d) => d.subject === "cpu7"),
        Stream.runHead
      )
    )
    await new Promise((r) => setTimeout(r, 20))
    host.appendKmsg("watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [kworker/7:1:99]")
    const head = await Effect.runPromise(Fiber.join(fiber))
    expect(head._tag).toBe("Some")
  })
})

describe("LogMonitorsService layer", () => {
  it("starts the readers with the layer and stops them with its scope", async () => {
    const host = makeTestHost()
    try {
      const program = Effect.gen(function* () {
        const monitors = yield* LogMonitorsService
        yield* Effect.promise(() =>
          waitFor("dmesg watching", () => monitors.status().dmesg === "watching", {
            timeoutMs: 5000,
            intervalMs: 10
          })
        )
        host.appendKmsg("INFO: task kworker/1:2:10762 blocked for more than 120 seconds.")
        return yield* monitors.detections.pipe(Stream.runHead)
      })
      const head = await Effect.runPromise(program.pipe(Effect.provide(LogMonitorsService.layer(host.root))))
      expect(head._tag === "Some" && head.value.reason).toBe("AppBlocked")
    } finally {
      host.cleanup()
    }
  })
  it("leaves out a user rule that cannot run and opens the sources of every other rule", async () => {
    const host = makeTestHost()
    const opened = await openScoped(
      makeLogMonitors(host.root, {
        extraRules: [{ id: "bad", sources: ["dmesg"], reason: "Nope", pattern: "abc" }],
        rules: { "kernel.no-such-rule": { disabled: true } }
      })
    )
    try {
      host.appendKmsg("watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [x:1]")
      await waitFor("the built-in rule still fires", () => opened.value.metrics().detections === 1, {
        timeoutMs: 5000,
        intervalMs: 10
      })
      expect(opened.value.metrics().detections).toBe(1)
    } finally {
      await opened.close()
      host.cleanup()
    }
  })
})

describe("finding lanes behind the real readers (issue #39)", () => {
  // Nothing is taken from the Stream until every finding was made, so the lanes hold repeats and a key's repeats
  // pass at most once a second: what gets through is news and the first repeat, and what is shed is counted.
  it("delivers every distinct fault; sheds and counts the storm's repeats", async () => {
    const host = makeTestHost()
    const opened = await openScoped(makeLogMonitors(host.root, {}, { capacity: 2 }))
    try {
      const monitors = opened.value
      await waitFor("dmesg watching", () => monitors.status().dmesg === "watching", {
        timeoutMs: 5000,
        intervalMs: 10
      })
      for (let i = 0; i < 50; i++) host.appendKmsg("watchdog: BUG: soft lockup - CPU#9 stuck for 22s! [x:1]")
      // Five CPUs are five distinct faults: news, past the full lane.
      for (let cpu = 0; cpu < 5; cpu++)
        host.appendKmsg(`watchdog: BUG: soft lockup - CPU#${cpu} stuck for 22s! [x:1]`)
      await waitFor("55 detections", () => monitors.metrics().detections === 55, {
        timeoutMs: 5000,
        intervalMs: 10
      })
      expect(monitors.metrics().findingsShed).toBe(48)
      expect(monitors.metrics().findingsDropped).toBe(0)
      const kept = await Effect.runPromise(monitors.findings.pipe(Stream.take(7), Stream.runCollect))
      expect(kept.map((d) => d.subject)).toEqual(["cpu9", "cpu0", "cpu1", "cpu2", "cpu3", "cpu4", "cpu9"])
      const text = await Effect.runPromise(PrometheusMetrics.format())
      expect(text).toMatch(
        /nodemend_agent_log_findings_shed_total\{source="dmesg",monitor="kernel",reason="SoftLockup"\} 48/
      )
      expect(monitors.drainShed()).toEqual([
        { source: "dmesg", monitor: "kernel", reason: "SoftLockup", count: 48 }
      ])
    } finally {
      await opened.close()
      host.cleanup()
    }
  })

  it("a storm on the ipamd file does not starve the kernel's faults", async () => {
    const host = makeTestHost()
    const ipamd = "var/log/aws-routed-eni/ipamd.log"
    host.appendFile(ipamd, '{"msg":"start"}')
    const opened = await openScoped(makeLogMonitors(host.root, {}, { capacity: 2 }))
    try {
      const monitors = opened.value
      await waitFor(
        "sources watching",
        () => monitors.status().dmesg === "watching" && monitors.status()[`file:/${ipamd}`] === "watching",
        { timeoutMs: 5000, intervalMs: 10 }
      )
      const storm = FAULT_LINES.find((f) => f.source === `file:/${ipamd}` && f.reason === "IPAMDNoIPs")!
      for (let i = 0; i < 200; i++) {
        host.appendFile(ipamd, storm.text)
        if (i % 40 === 20)
          host.appendKmsg(`INFO: task kworker/${i}:2:10762 blocked for more than 120 seconds.`)
        if (i % 40 === 30) host.appendKmsg(`watchdog: BUG: soft lockup - CPU#${i} stuck for 22s! [x:1]`)
      }
      await waitFor("210 detections", () => monitors.metrics().detections === 210, {
        timeoutMs: 10_000,
        intervalMs: 10
      })
      const all = await Effect.runPromise(
        monitors.findings.pipe(Stream.take(210 - monitors.metrics().findingsShed), Stream.runCollect)
      )
      expect(all.filter((f) => f.reason === "AppBlocked" || f.reason === "SoftLockup")).toHaveLength(10)
      expect(monitors.drainShed()).toEqual([
        { source: `file:/${ipamd}`, monitor: "networking", reason: "IPAMDNoIPs", count: 198 }
      ])
    } finally {
      await opened.close()
      host.cleanup()
    }
  })
})

describe("log pipeline time", () => {
  // The readers read the agent's Clock (TestClock here): a line that carries no time of its own is stamped by it.
  itEffect.effect("stamps a line without a time of its own with the Clock's time", () =>
    Effect.gen(function* () {
      const host = makeTestHost()
      yield* Effect.addFinalizer(() => Effect.sync(() => host.cleanup()))
      const at = Date.UTC(2026, 0, 2, 3, 4, 5)
      yield* TestClock.setTime(at)
      const monitors = yield* makeLogMonitors(host.root)
      yield* Effect.promise(() =>
        waitFor("sources to start", () => Object.values(monitors.status()).every((s) => s !== "starting"), {
          timeoutMs: 10_000,
          intervalMs: 10
        })
      )
      const line = FAULT_LINES.find(
        (l) => l.reason === "EtcHostsMountFailed" && l.source === "file:/var/log/messages"
      )
      host.appendFile("var/log/messages", line!.text)
      const [first] = yield* monitors.findings.pipe(Stream.take(1), Stream.runCollect)
      expect(first).toMatchObject({ _tag: "Detection", reason: "EtcHostsMountFailed", observedAtMs: at })
    })
  )
})
