import { CATALOG, resolveReason } from "@nodemend/reason-codes"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Detection, Finding } from "../../src/model.ts"
import {
  BUILTIN_RULES,
  compileRules,
  InvalidRule,
  type LogSourceId,
  makeLogRuleEngine,
  requiredLiteral,
  toLogRule
} from "../../src/rules/index.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"
import {
  ALL_BENIGN_LINES as BENIGN_LINES,
  ALL_FAULT_LINES as FAULT_LINES,
  ALL_RESOLVE_LINES as RESOLVE_LINES
} from "../fixtures/all-log-lines.ts"

/** The log-driven reasons named in issue #8 (sections 2.3-2.7 of the NMA reference). */
const LOG_DRIVEN = [
  "SoftLockup",
  "KernelBug",
  "AppCrash",
  "AppBlocked",
  "ConntrackExceededKernel",
  "ForkFailedOutOfPIDs",
  "RapidCron",
  "PodStuckTerminating",
  "KubeletFailed",
  "ContainerRuntimeFailed",
  "ReadinessProbeFailures",
  "LivenessProbeFailures",
  "ServiceFailedToStart",
  "IPAMDNotReady",
  "IPAMDRepeatedlyRestart",
  "IPAMDNoIPs",
  "KubeProxyNotReady",
  "NPABPFRecoveryError",
  "EtcHostsMountFailed",
  "KubeletDiskUsageSlow",
  "BlockDeviceIOError",
  "NeuronSRAMUncorrectableError",
  "NeuronNCUncorrectableError",
  "NeuronHBMUncorrectableError",
  "NeuronDMAError",
  "NvidiaNCCLError",
  "NvidiaXID{code}Error",
  // node-problem-detector's kernel and filesystem rules (issue #27)
  "OutOfMemoryKill",
  "UnregisterNetDeviceStuck",
  "HardwareErrorCorrected",
  "HardwareErrorCorrectedRepeatedly",
  "HardwareErrorRecoverable",
  "HardwareErrorFatal",
  "MemoryErrorCorrected",
  "MemoryErrorCorrectedRepeatedly",
  "Ext4FilesystemError",
  "Ext4FilesystemWarning",
  "XFSFilesystemShutdown",
  "FilesystemRemountedReadOnly"
]

/** The built-in rules as the compiler builds them from their data. */
const LOG_RULES = BUILTIN_RULES.map(toLogRule)
const catalogCodes = new Set(CATALOG.map((e) => e.code as string))
const onlyDetections = (fs: readonly Finding[]): Detection[] =>
  fs.filter((f): f is Detection => f._tag === "Detection")

/**
 * Feeds a line as many times as the rule of `reason` needs (any rule's when undefined), 100 ms apart; returns the
 * detections per feed.
 */
const feed = (source: LogSourceId, text: string, reason?: string, t0 = 1_700_000_000_000) => {
  const engine = makeLogRuleEngine()
  const hit = engine.matcher.match(source, text).filter((h) => reason === undefined || h.reason === reason)
  const times = Math.max(1, ...hit.map((h) => h.minOccurrences))
  return Array.from({ length: times }, (_, i) => {
    const detections = onlyDetections(engine.process({ source, text, timestampMs: t0 + i * 100 }))
    recordProduced(detections)
    return detections
  })
}

describe("rule data", () => {
  it("references only catalog codes", () => {
    for (const rule of LOG_RULES) expect(catalogCodes.has(rule.code), rule.id).toBe(true)
  })
  it("has unique ids and a rule for every log-driven reason", () => {
    expect(new Set(LOG_RULES.map((r) => r.id)).size).toBe(LOG_RULES.length)
    const codes = new Set(LOG_RULES.map((r) => r.code as string))
    for (const code of LOG_DRIVEN) expect(codes.has(code), code).toBe(true)
  })
  it("has a fault fixture for every reason a rule produces", () => {
    const covered = new Set(FAULT_LINES.map((f) => resolveReason(f.reason)!.entry.code))
    for (const rule of LOG_RULES) expect(covered.has(rule.code), rule.id).toBe(true)
  })
})

/**
 * Issue #8: every fixture cites where its wording comes from, so a reviewer can check it. The rule (also stated at
 * the top of test/fixtures/log-lines.ts): a fault or resolve line cites an https:// URL, or `reference: <file>.md §n`
 * for a line copied verbatim from our reference files; a URL that only points at upstream source files (a blob that
 * is not a doc) must say whether the line is "rendered from" a format string or copied "verbatim from" that file.
 * A benign line cites a URL or starts with `look-alike: ` and says why it must stay silent.
 */
const URL_IN_CITE = /https:\/\/[^\s`"'()]+[^\s`"'().,;:]/g
const REFERENCE_POINTER = /\breference: [\w.-]+\.md §\d+(?:\.\d+)?/
const DOC_FILE = /\.(?:md|rst|adoc|txt|html?)(?:[#?].*)?$/
const LOOK_ALIKE = /^look-alike: \S.{9,}/

const citedUrls = (cite: string): URL[] => (cite.match(URL_IN_CITE) ?? []).map((u) => new URL(u))
const isSourceFile = (u: URL) => /^\/[^/]+\/[^/]+\/blob\//.test(u.pathname) && !DOC_FILE.test(u.pathname)

/** Why a fault/resolve citation is not checkable, or undefined when it is. */
const positiveCiteProblem = (cite: string): string | undefined => {
  const urls = citedUrls(cite)
  if (urls.length === 0)
    return REFERENCE_POINTER.test(cite)
      ? undefined
      : "no https:// URL and no `reference: <file>.md §n` pointer"
  if (urls.some((u) => !u.hostname.includes("."))) return "a URL without a host"
  if (urls.every(isSourceFile) && !/rendered from|verbatim from/.test(cite))
    return 'cites only upstream source files without saying "rendered from" or "verbatim from"'
  return undefined
}
const benignCiteProblem = (cite: string): string | undefined =>
  citedUrls(cite).length > 0 || LOOK_ALIKE.test(cite)
    ? undefined
    : "neither an https:// URL nor `look-alike: <why it is benign>`"

describe("fixture citations", () => {
  for (const f of [...FAULT_LINES, ...RESOLVE_LINES])
    it(`${f.reason} <- ${f.text.slice(0, 60)} cites a checkable source`, () => {
      expect(positiveCiteProblem(f.cite), f.cite).toBeUndefined()
    })
  for (const f of BENIGN_LINES)
    it(`benign ${f.text.slice(0, 60)} cites a source or says look-alike`, () => {
      expect(benignCiteProblem(f.cite), f.cite).toBeUndefined()
    })
  it("rejects the citations this rule exists to catch", () => {
    expect(positiveCiteProblem("constructed from the containerd 1.6+/runc 1.1 error chain")).toBeDefined()
    expect(positiveCiteProblem("kubelet < 1.21 prober.go `%s probe for %q failed (%v): %s`")).toBeDefined()
    expect(positiveCiteProblem("https://github.com/o/r/blob/v1/pkg/x.go")).toBeDefined()
    expect(
      positiveCiteProblem("rendered from the format string at https://github.com/o/r/blob/v1/pkg/x.go")
    ).toBe(undefined)
    expect(positiveCiteProblem("https://github.com/o/r/issues/1 (kernel 6.8)")).toBeUndefined()
    expect(positiveCiteProblem("reference: eks-node-monitoring-agent.md §7.1")).toBeUndefined()
    expect(benignCiteProblem("systemd >= 250 start message")).toBeDefined()
    expect(benignCiteProblem("look-alike: systemd >= 250 start message")).toBeUndefined()
  })
})

describe("fault lines", () => {
  for (const f of FAULT_LINES) {
    it(`${f.reason} <- ${f.text.slice(0, 70)}`, () => {
      const results = feed(f.source, f.text, f.reason)
      // Below the window nothing fires; the last occurrence fires exactly once. (An Event whose run a rule
      // `alongside` escalates fires on every line; only the fixture's own reason is windowed.)
      for (const r of results.slice(0, -1)) expect(r.filter((d) => d.reason === f.reason)).toEqual([])
      const last = results.at(-1)!.filter((d) => d.reason === f.reason)
      expect(last).toHaveLength(1)
      const d = last[0]!
      const entry = resolveReason(f.reason)!.entry
      expect(d.conditionType).toBe(entry.conditionType)
      expect(d.monitor).toBe(entry.monitor)
      expect(d.severity).toBe(entry.severity)
      expect(d.observedAtMs).toBe(1_700_000_000_000 + (results.length - 1) * 100)
      if (f.subject !== undefined) expect(d.subject).toBe(f.subject)
      if (f.message !== undefined) expect(d.message).toBe(f.message)
      expect(d.message).not.toMatch(/\{\w+\}/)
    })
  }
})

describe("benign look-alikes", () => {
  for (const b of BENIGN_LINES) {
    it(`silent: ${b.text.slice(0, 80)}`, () => {
      const engine = makeLogRuleEngine()
      expect(engine.matcher.match(b.source, b.text)).toEqual([])
    })
  }
  it("a fault line is silent on a source its rule does not read", () => {
    const engine = makeLogRuleEngine()
    expect(engine.matcher.match("journal:kubelet", "nf_conntrack: table full, dropping packet")).toEqual([])
  })
})

describe("rule order and monitors", () => {
  it("a soft lockup is not also a KernelBug", () => {
    const engine = makeLogRuleEngine()
    const m = engine.matcher.match(
      "dmesg",
      "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]"
    )
    expect(m.map((x) => x.reason)).toEqual(["SoftLockup"])
  })
  it("a libnccl segfault is an AppCrash and an NvidiaNCCLError", () => {
    const engine = makeLogRuleEngine()
    const text = FAULT_LINES.find((f) => f.reason === "NvidiaNCCLError")!.text
    expect(engine.matcher.match("dmesg", text).map((x) => x.reason)).toEqual(["AppCrash", "NvidiaNCCLError"])
  })
})

describe("escalation of repeated Events (rules alongside)", () => {
  const edac = (dimm: string) =>
    `EDAC MC0: 1 CE memory read error on ${dimm} (channel:2 slot:0 page:0x849923 offset:0x380 grain:32 syndrome:0x0)`
  it("each corrected memory error is an Event; the 10th on one DIMM within 24 h is also a Condition", () => {
    const engine = makeLogRuleEngine()
    const hour = 3_600_000
    const fired = Array.from({ length: 10 }, (_, i) =>
      onlyDetections(
        engine.process({
          source: "dmesg",
          text: edac("CPU_SrcID#0_Ha#0_Chan#2_DIMM#0"),
          timestampMs: i * 2 * hour
        })
      ).map((d) => `${d.reason}/${d.severity}`)
    )
    for (const f of fired.slice(0, -1)) expect(f).toEqual(["MemoryErrorCorrected/Event"])
    expect(fired.at(-1)).toEqual(["MemoryErrorCorrected/Event", "MemoryErrorCorrectedRepeatedly/Condition"])
  })
  it("counts per DIMM and within the window only", () => {
    const engine = makeLogRuleEngine()
    const reasons = (text: string, at: number) =>
      onlyDetections(engine.process({ source: "dmesg", text, timestampMs: at })).map((d) => d.reason)
    // 9 on one DIMM and 9 on another: no escalation.
    for (let i = 0; i < 9; i++) {
      expect(reasons(edac("DIMM_A"), i)).toEqual(["MemoryErrorCorrected"])
      expect(reasons(edac("DIMM_B"), i)).toEqual(["MemoryErrorCorrected"])
    }
    // A 10th on DIMM_A more than 24 h after the first ones starts a new run.
    expect(reasons(edac("DIMM_A"), 86_400_000 + 10)).toEqual(["MemoryErrorCorrected"])
  })
  it("disabling the Event leaves its escalation, and the reverse", () => {
    const line = "{37}[Hardware Error]: event severity: corrected"
    const run = (reasons: Record<string, { disabled: boolean }>) => {
      const engine = makeLogRuleEngine({ reasons })
      return Array.from({ length: 10 }, (_, i) =>
        onlyDetections(engine.process({ source: "dmesg", text: line, timestampMs: i })).map((d) => d.reason)
      ).flat()
    }
    expect(run({ HardwareErrorCorrected: { disabled: true } })).toEqual(["HardwareErrorCorrectedRepeatedly"])
    expect(run({ HardwareErrorCorrectedRepeatedly: { disabled: true } })).toEqual(
      Array(10).fill("HardwareErrorCorrected")
    )
  })
  it("a fatal or recoverable CPER record is not counted as corrected", () => {
    const engine = makeLogRuleEngine()
    const m = engine.matcher.match("dmesg", "{3}[Hardware Error]: event severity: recoverable")
    expect(m.map((x) => x.reason)).toEqual(["HardwareErrorRecoverable"])
  })
})

describe("resolutions", () => {
  it("every resolving rule has a fixture line, and it yields a Resolution", () => {
    for (const rule of LOG_RULES.filter((r) => r.resolves === true))
      expect(
        RESOLVE_LINES.some((l) => l.reason === rule.code),
        rule.id
      ).toBe(true)
    for (const l of RESOLVE_LINES) {
      const engine = makeLogRuleEngine()
      expect(engine.process({ source: l.source, text: l.text, timestampMs: 7 })).toEqual([
        {
          _tag: "Resolution",
          monitor: resolveReason(l.reason)!.entry.monitor,
          reason: l.reason,
          conditionType: resolveReason(l.reason)!.entry.conditionType,
          observedAtMs: 7
        }
      ])
    }
  })
  it("a resolution starts the failure window over", () => {
    const engine = makeLogRuleEngine()
    const ipamd: LogSourceId = "file:/var/log/aws-routed-eni/ipamd.log"
    const fail =
      '{"level":"error","msg":"Unable to reach API Server, Get https://10.100.0.1:443/version: timeout"}'
    const feedFailures = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) =>
        engine.process({ source: ipamd, text: fail, timestampMs: from + i * 10_000 })
      ).flat()
    expect(feedFailures(0, 5)).toEqual([])
    const ok = RESOLVE_LINES[0]!.text
    expect(engine.process({ source: ipamd, text: ok, timestampMs: 55_000 }).map((f) => f._tag)).toEqual([
      "Resolution"
    ])
    // Without the reset this 6th failure within 2 minutes would fire.
    expect(feedFailures(60_000, 5)).toEqual([])
    expect(feedFailures(110_000, 1).map((f) => f.reason)).toEqual(["IPAMDNotReady"])
  })
})

describe("occurrence windows", () => {
  const restart = '{"level":"info","ts":"x","msg":"Starting L-IPAMD v1.19.0 ..."}'
  const ipamd: LogSourceId = "file:/var/log/aws-routed-eni/ipamd.log"
  it("IPAMDRepeatedlyRestart needs 5 restarts within 20 minutes, not in a lifetime", () => {
    const engine = makeLogRuleEngine()
    const hourly = Array.from({ length: 10 }, (_, i) =>
      engine.process({ source: ipamd, text: restart, timestampMs: i * 3_600_000 })
    )
    expect(hourly.flat()).toEqual([])
    const burst = Array.from({ length: 5 }, (_, i) =>
      engine.process({ source: ipamd, text: restart, timestampMs: 100 * 3_600_000 + i * 60_000 })
    )
    expect(burst.flat().map((d) => d.reason)).toEqual(["IPAMDRepeatedlyRestart"])
  })
  it("windows are per (reason, subject): two pods stuck once each do not add up", () => {
    const engine = makeLogRuleEngine()
    const line = (pod: string) =>
      `"Pod still has one or more containers in the non-exited state and will not be removed from desired state" pod="${pod}"`
    const k: LogSourceId = "journal:kubelet"
    expect(engine.process({ source: k, text: line("a/x"), timestampMs: 0 })).toEqual([])
    expect(engine.process({ source: k, text: line("b/y"), timestampMs: 1 })).toEqual([])
    const fired = engine.process({ source: k, text: line("a/x"), timestampMs: 2 })
    expect(fired.map((d) => d.subject)).toEqual(["a/x"])
  })
  it("probe failures: 5 per 5 s pass (token bucket burst), a 6th within 5 s fires", () => {
    const engine = makeLogRuleEngine()
    const text = '"Probe failed" probeType="Readiness" pod="default/web-0" podUID="1" containerName="web"'
    const k: LogSourceId = "journal:kubelet"
    const steady = Array.from({ length: 20 }, (_, i) =>
      engine.process({ source: k, text, timestampMs: i * 1000 })
    )
    expect(steady.flat()).toEqual([])
    const burst = Array.from({ length: 6 }, (_, i) =>
      engine.process({ source: k, text, timestampMs: 100_000 + i * 200 })
    )
    expect(burst.flat().map((d) => d.reason)).toEqual(["ReadinessProbeFailures"])
  })
})

describe("overrides", () => {
  const lockup = "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [x:1]"
  it("disables a reason", () => {
    const engine = makeLogRuleEngine({ reasons: { SoftLockup: { disabled: true } } })
    // `watchdog: BUG:` is not a KernelBug line either, so the line is silent.
    expect(engine.process({ source: "dmesg", text: lockup, timestampMs: 0 })).toEqual([])
    expect(engine.matcher.match("dmesg", "BUG: kernel NULL pointer dereference, address: 0")).toHaveLength(1)
    expect(
      engine.process({
        source: "dmesg",
        text: "BUG: soft lockup - CPU#10 stuck for 23s! [m:1]",
        timestampMs: 0
      })
    ).toEqual([])
  })
  it("disables a templated reason by its exact code", () => {
    const engine = makeLogRuleEngine({ reasons: { NvidiaXID13Warning: { disabled: true } } })
    const xid = (n: number) => `NVRM: Xid (PCI:0000:3b:00): ${n}, pid=1, name=x, y`
    expect(engine.process({ source: "dmesg", text: xid(13), timestampMs: 0 })).toEqual([])
    expect(engine.process({ source: "dmesg", text: xid(79), timestampMs: 0 }).map((d) => d.reason)).toEqual([
      "NvidiaXID79Error"
    ])
  })
  it("a template key covers every reason of the template; the exact reason wins", () => {
    const engine = makeLogRuleEngine({
      reasons: {
        "NvidiaXID{code}Warning": { disabled: true },
        "NvidiaXID{code}Error": { severity: "Event" },
        NvidiaXID79Error: { severity: "Condition" }
      }
    })
    const xid = (n: number) => `NVRM: Xid (PCI:0000:3b:00): ${n}, pid=1, name=x, y`
    const at = (n: number) => engine.process({ source: "dmesg", text: xid(n), timestampMs: 0 })
    expect(at(13)).toEqual([])
    expect(at(31)).toEqual([])
    expect(onlyDetections(at(48)).map((d) => [d.reason, d.severity])).toEqual([["NvidiaXID48Error", "Event"]])
    expect(onlyDetections(at(79)).map((d) => [d.reason, d.severity])).toEqual([
      ["NvidiaXID79Error", "Condition"]
    ])
  })
  it("changes severity and occurrence window", () => {
    const engine = makeLogRuleEngine({
      reasons: { SoftLockup: { severity: "Condition", minOccurrences: 2, windowSeconds: 60 } }
    })
    expect(engine.process({ source: "dmesg", text: lockup, timestampMs: 0 })).toEqual([])
    const [d] = onlyDetections(engine.process({ source: "dmesg", text: lockup, timestampMs: 30_000 }))
    expect(d?.severity).toBe("Condition")
  })
  it("adds a user rule, deriving its literal from the pattern", () => {
    const engine = makeLogRuleEngine({
      extraRules: [
        {
          id: "user.xfs-shutdown",
          sources: ["dmesg"],
          reason: "KernelBug",
          pattern: "XFS \\((?<dev>[\\w-]+)\\): Corruption of in-memory data detected\\.",
          message: "XFS shut down on {dev}",
          subject: "{dev}"
        }
      ]
    })
    const text = "XFS (nvme1n1): Corruption of in-memory data detected.  Shutting down filesystem"
    // The built-in storage rule (XFSFilesystemShutdown) fires too: another monitor.
    const d = engine.process({ source: "dmesg", text, timestampMs: 5 }).find((f) => f.reason === "KernelBug")
    expect(d).toMatchObject({ reason: "KernelBug", message: "XFS shut down on nvme1n1", subject: "nvme1n1" })
  })
  it("rejects a user rule with an unknown reason, a bad pattern or no literal", () => {
    const base = { id: "u", sources: ["dmesg"] as const, reason: "KernelBug", pattern: "abc" }
    expect(() => compileRules({ extraRules: [{ ...base, reason: "NotAReason" }] })).toThrow(InvalidRule)
    expect(() => compileRules({ extraRules: [{ ...base, pattern: "(" }] })).toThrow(/does not compile/)
    expect(() => compileRules({ extraRules: [{ ...base, pattern: "a|b" }] })).toThrow(/literal/)
    expect(() =>
      compileRules({ extraRules: [{ ...base, pattern: "a|b", literals: ["a", "b"] }] })
    ).not.toThrow()
    expect(() => compileRules({ extraRules: [{ ...base, pattern: "abc(x+)+y" }] })).toThrow(/backtrack/)
    expect(() => compileRules({ extraRules: [{ ...base, id: "kernel.soft-lockup" }] })).toThrow(
      /already exists/
    )
    expect(() => compileRules({ extraRules: [base, base] })).toThrow(/already exists/)
    expect(() => compileRules({ extraRules: [{ ...base, pattern: "abc(?:\\w*\\s)*$" }] })).toThrow(
      /backtrack/
    )
    expect(() => compileRules({ extraRules: [{ ...base, pattern: "abc(x+)y" }] })).not.toThrow()
  })
})

describe("requiredLiteral", () => {
  it("finds the longest literal run", () => {
    expect(requiredLiteral("task (.*?):\\d+ blocked for more than")).toBe(" blocked for more than")
    expect(requiredLiteral("I\\/O error, dev (\\w+)")).toBe("I/O error, dev ")
    expect(requiredLiteral("abcx?def")).toBe("abc")
    expect(requiredLiteral("ab+cdef")).toBe("bcdef")
    expect(requiredLiteral("foo|bar")).toBeUndefined()
    expect(requiredLiteral("[abc]\\d")).toBeUndefined()
  })
  it("property: the literal of an escaped string is the string, and every match contains the literal", () => {
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
    fc.assert(
      fc.property(fc.string({ minLength: 2, maxLength: 20 }), fc.string({ maxLength: 8 }), (lit, tail) => {
        const pattern = `${esc(lit)}\\d*${esc(tail)}`
        const literal = requiredLiteral(pattern)
        expect(literal !== undefined && literal.length >= lit.length).toBe(true)
        const sample = `${lit}42${tail}`
        if (new RegExp(pattern).test(sample)) expect(sample.includes(literal!)).toBe(true)
      })
    )
  })
})

describe("prefilter soundness", () => {
  // Reference: every rule regex on every line, first match per monitor (plus `alongside` rules), no literal screening.
  const naive = (source: LogSourceId, text: string): string[] => {
    const hit = new Set<string>()
    const out: string[] = []
    for (const rule of LOG_RULES) {
      if (!rule.sources.includes(source)) continue
      const monitor = resolveReason(rule.code.replace(/\{\w+\}/g, "1"))!.entry.monitor
      if (rule.alongside !== true && hit.has(monitor)) continue
      const m = rule.pattern.exec(text)
      if (m === null) continue
      if (rule.alongside !== true) hit.add(monitor)
      // A decoder (rules/decoders.ts) may say the line is not the rule's reason after all.
      const reason = rule.reasonOf === undefined ? rule.code : rule.reasonOf(m.groups ?? {})
      if (reason !== undefined) out.push(reason)
    }
    return out
  }
  const lines = [...FAULT_LINES, ...BENIGN_LINES]
  it("property: the literal prefilter never loses a match the rule regexes would make", () => {
    const matcher = compileRules()
    fc.assert(
      fc.property(
        fc.constantFrom(...lines),
        fc.nat(200),
        fc.nat(200),
        fc.string({ maxLength: 6 }),
        (line, cut, at, insert) => {
          // Near-misses and variants: cut the line and splice random text into it.
          const base = line.text.slice(0, Math.max(1, line.text.length - (cut % 8)))
          const i = at % (base.length + 1)
          for (const text of [line.text, base, base.slice(0, i) + insert + base.slice(i)]) {
            expect(matcher.match(line.source, text).map((m) => m.reason)).toEqual(naive(line.source, text))
          }
        }
      ),
      { numRuns: 3000 }
    )
  })
})

describe("bad user rules", () => {
  it("property: any user rule either compiles or fails with InvalidRule naming the rule", () => {
    const reasons = ["KernelBug", "NvidiaXID79Error", "NvidiaXID{code}Error", "NoSuchReason", ""]
    fc.assert(
      fc.property(
        fc.string({ maxLength: 24 }),
        fc.constantFrom(...reasons),
        fc.option(fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 2 }), { nil: undefined }),
        (pattern, reason, literals) => {
          const rule = {
            id: "prop",
            sources: ["dmesg"] as const,
            reason,
            pattern,
            ...(literals !== undefined ? { literals } : {})
          }
          try {
            const m = compileRules({ extraRules: [rule] })
            // A compiled rule never breaks matching of arbitrary text.
            m.match("dmesg", pattern)
          } catch (e) {
            expect(e).toBeInstanceOf(InvalidRule)
            expect((e as InvalidRule).ruleId).toBe("prop")
          }
        }
      ),
      { numRuns: 1000 }
    )
  })
})
