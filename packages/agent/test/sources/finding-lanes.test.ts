// Log storms against the finding lanes (issue #39), deterministic: records go through the real rule engine into
// the lanes as the readers hand them over, and a slow sink takes a few findings every hundred lines (the sink is
// what falls behind in a storm). Before, one queue of 4,096 shared by every source filled and dropped whatever
// came next: first occurrences, other sources' faults and resolutions alike.
import { describe, expect, it } from "vitest"
import type { Finding } from "../../src/model.ts"
import { makeLogRuleEngine } from "../../src/rules/index.ts"
import type { LogRecord, LogSourceId } from "../../src/rules/rule.ts"
import { makeFindingLanes, NEWS_WINDOW_MS, REPEAT_INTERVAL_MS } from "../../src/sources/finding-lanes.ts"
import { FAULT_LINES, RESOLVE_LINES } from "../fixtures/log-lines.ts"

const IPAMD: LogSourceId = "file:/var/log/aws-routed-eni/ipamd.log"
const STORM = "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]"
const BENIGN = "audit: type=1400 audit(1700000000.000:1): apparmor=STATUS"
const probe = makeLogRuleEngine()
const firesOnce = (source: LogSourceId, text: string) => {
  const m = probe.matcher.match(source, text)
  return m.length === 1 && m[0]!.minOccurrences <= 1 && !m[0]!.resolves
}
/** Ten kernel faults of ten reasons other than the storm's, each firing on its first line. */
const distinctKernelFaults = (() => {
  const byReason = new Map<string, string>()
  for (const f of FAULT_LINES)
    if (
      f.source === "dmesg" &&
      f.reason !== "SoftLockup" &&
      !byReason.has(f.reason) &&
      firesOnce("dmesg", f.text)
    )
      byReason.set(f.reason, f.text)
  return [...byReason].slice(0, 10).map(([reason, text]) => ({ reason, text }))
})()
const IPAMD_STORM = FAULT_LINES.find((f) => f.source === IPAMD && firesOnce(IPAMD, f.text))!

/** Lines through the engine into the lanes; the sink takes `takePer100` findings after every 100 lines. */
const run = (
  lines: readonly { source: LogSourceId; text: string }[],
  takePer100 = 4,
  repeatsPerSource = 1024
) => {
  const engine = makeLogRuleEngine()
  const lanes = makeFindingLanes({ repeatsPerSource })
  const delivered: Finding[] = []
  const offered = new Map<string, number>()
  lines.forEach(({ source, text }, i) => {
    const record: LogRecord = { source, text, timestampMs: 1_000 + i }
    for (const f of engine.process(record)) {
      offered.set(f.reason, (offered.get(f.reason) ?? 0) + 1)
      lanes.offer(source, f, 1_000 + Math.floor(i / 1000))
    }
    if (i % 100 === 99) delivered.push(...lanes.take(takePer100))
  })
  for (let batch = lanes.take(512); batch.length > 0; batch = lanes.take(512)) delivered.push(...batch)
  const count = (reason: string, tag: Finding["_tag"] = "Detection") =>
    delivered.filter((f) => f.reason === reason && f._tag === tag).length
  /** Findings of a reason made by the engine and not delivered. */
  const missing = (reason: string) =>
    (offered.get(reason) ?? 0) - delivered.filter((f) => f.reason === reason).length
  return { delivered, lanes, count, missing }
}

describe("finding lanes: news is never shed (issue #39)", () => {
  it("has ten distinct kernel faults and an ipamd storm line to work with", () => {
    expect(distinctKernelFaults).toHaveLength(10)
    expect(IPAMD_STORM).toBeDefined()
  })

  it("a 20% storm of one reason with 10 distinct faults inside it: all 10 delivered, repeats shed and counted", () => {
    const lines: { source: LogSourceId; text: string }[] = []
    for (let i = 0; i < 50_000; i++) {
      lines.push({ source: "dmesg", text: i % 5 === 0 ? STORM : BENIGN })
      // Halfway between two takes of the sink, when the storm has filled what the last take freed.
      if (i % 5_000 === 2_550)
        lines.push({ source: "dmesg", text: distinctKernelFaults[(i - 2_550) / 5_000]!.text })
    }
    const { delivered, lanes, missing } = run(lines)
    const reasons = new Set(delivered.map((f) => f.reason))
    for (const f of distinctKernelFaults) expect(reasons.has(f.reason), f.reason).toBe(true)
    // Of 10,000 storm findings what was not delivered was shed, every one counted under the storm's reason.
    const shed = missing("SoftLockup")
    expect(shed).toBeGreaterThan(5_000)
    expect(lanes.shed()).toEqual([
      expect.objectContaining({ source: "dmesg", reason: "SoftLockup", count: shed })
    ])
    expect(lanes.shedTotal()).toBe(shed)
    expect(lanes.untrackedShed()).toBe(0)
    expect(lanes.drainShed()).toEqual([
      { source: "dmesg", monitor: "kernel", reason: "SoftLockup", count: shed }
    ])
    expect(lanes.drainShed()).toEqual([])
  })

  it("a storm on the ipamd file with kernel faults during it: every kernel fault delivered", () => {
    const lines: { source: LogSourceId; text: string }[] = []
    for (let i = 0; i < 40_000; i++) {
      lines.push({ source: IPAMD, text: IPAMD_STORM.text })
      if (i % 4_000 === 2_000)
        lines.push({ source: "dmesg", text: distinctKernelFaults[(i - 2_000) / 4_000]!.text })
    }
    const { delivered, lanes, missing } = run(lines)
    const kernelReasons = new Set(distinctKernelFaults.map((f) => f.reason))
    const kernel = delivered.filter((f) => kernelReasons.has(f.reason)).map((f) => f.reason)
    expect(kernel).toEqual(distinctKernelFaults.map((f) => f.reason))
    expect(lanes.shed().map((c) => [c.source, c.reason])).toEqual([[IPAMD, IPAMD_STORM.reason]])
    expect(lanes.shed()[0]!.count).toBe(missing(IPAMD_STORM.reason))
    expect(missing(IPAMD_STORM.reason)).toBeGreaterThan(20_000)
  })

  it("resolutions during a storm are delivered, after the detections they clear", () => {
    const resolve = RESOLVE_LINES.find((l) => l.source === IPAMD)!
    const notReady = FAULT_LINES.find((f) => f.source === IPAMD && f.reason === resolve.reason)!
    const lines: { source: LogSourceId; text: string }[] = []
    // A storm of the reason that resolves, with two resolutions in it, each halfway between two takes of the sink.
    while (lines.length < 30_000) {
      lines.push({ source: IPAMD, text: notReady.text })
      if (lines.length === 15_050 || lines.length === 29_950)
        lines.push({ source: IPAMD, text: resolve.text })
    }
    const { delivered, lanes, missing } = run(lines)
    const ofReason = delivered.filter((f) => f.reason === resolve.reason)
    const resolutions = ofReason.flatMap((f, i) => (f._tag === "Resolution" ? [i] : []))
    expect(resolutions).toHaveLength(2)
    // Every detection delivered before a resolution was read before it, every one after it was read after it:
    // a cleared fault never comes back from the queue.
    for (const r of resolutions) {
      const at = ofReason[r]!.observedAtMs
      expect(ofReason.slice(0, r).every((f) => f.observedAtMs < at)).toBe(true)
      expect(ofReason.slice(r + 1).every((f) => f.observedAtMs > at)).toBe(true)
      // The fault coming back right after its resolution is news again.
      expect(ofReason[r + 1]?._tag).toBe("Detection")
    }
    expect(missing(resolve.reason)).toBeGreaterThan(0)
    expect(lanes.shedTotal()).toBe(missing(resolve.reason))
  })

  it("while the lane holds repeats, a key's repeats pass at most once a second; the others are shed and counted", () => {
    const engine = makeLogRuleEngine()
    const lanes = makeFindingLanes()
    const offer = (atMs: number) => {
      const [f] = engine.process({ source: "dmesg", text: STORM, timestampMs: atMs })
      return lanes.offer("dmesg", f!, atMs)
    }
    expect(offer(0)).toBe("news")
    // The lane is empty (the sink keeps up): a repeat is delivered.
    expect(offer(1)).toBe("queued")
    expect(offer(2)).toBe("shed")
    expect(offer(REPEAT_INTERVAL_MS)).toBe("shed")
    expect(offer(REPEAT_INTERVAL_MS + 1)).toBe("queued")
    expect(offer(REPEAT_INTERVAL_MS + 2)).toBe("shed")
    expect(lanes.take(10).map((f) => f.observedAtMs)).toEqual([0, 1, REPEAT_INTERVAL_MS + 1])
    expect(lanes.shedTotal()).toBe(3)
    // Taken: calm again.
    expect(offer(REPEAT_INTERVAL_MS + 3)).toBe("queued")
  })

  it("a repeat becomes news again after the news window", () => {
    const engine = makeLogRuleEngine()
    const lanes = makeFindingLanes({ repeatsPerSource: 1, repeatIntervalMs: 0 })
    const offer = (atMs: number) => {
      const [f] = engine.process({ source: "dmesg", text: STORM, timestampMs: atMs })
      return lanes.offer("dmesg", f!, atMs)
    }
    expect(offer(0)).toBe("news")
    expect(offer(1)).toBe("queued")
    expect(offer(2)).toBe("shed")
    expect(offer(NEWS_WINDOW_MS - 1)).toBe("shed")
    expect(offer(NEWS_WINDOW_MS)).toBe("news")
    // The queued repeat is older than the news of its key: superseded, shed at take and counted.
    expect(lanes.take(10).map((f) => f.observedAtMs)).toEqual([0, NEWS_WINDOW_MS])
    expect(lanes.shedTotal()).toBe(3)
  })

  it("keeps memory bounded: subjects beyond the tracked bound are repeats, counted as untracked when shed", () => {
    const lanes = makeFindingLanes({ repeatsPerSource: 2, subjectsPerReason: 4, repeatIntervalMs: 0 })
    const lockup = (cpu: number): Finding => ({
      _tag: "Detection",
      monitor: "kernel",
      reason: "SoftLockup",
      conditionType: "KernelReady",
      severity: "Event",
      message: "m",
      observedAtMs: 0,
      subject: `cpu${cpu}`
    })
    const verdicts = Array.from({ length: 10 }, (_, cpu) => lanes.offer("dmesg", lockup(cpu), 0))
    expect(verdicts).toEqual([
      "news",
      "news",
      "news",
      "news",
      "queued",
      "queued",
      "shed",
      "shed",
      "shed",
      "shed"
    ])
    expect(lanes.untrackedShed()).toBe(4)
    expect(lanes.pending()).toBe(6)
  })
})
