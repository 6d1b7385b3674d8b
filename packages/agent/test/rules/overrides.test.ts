/**
 * Issue #27: operators list, override, disable and extend any rule, built-in or their own, through the config
 * (`logRuleOverrides` by rule id, `logRules` in the built-ins' shape). Bad input names the rule and the field and,
 * in the running agent, is left out while every other rule keeps working.
 */
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseConfigText } from "../../src/config/load.ts"
import { ruleOverridesFromConfig } from "../../src/config/rule-overrides.ts"
import {
  BUILTIN_RULES,
  type BuiltinRule,
  compileRules,
  effectiveRules,
  InvalidRule,
  makeLogRuleEngine,
  type RuleOverrides
} from "../../src/rules/index.ts"

const LOCKUP = "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]"
const IO_ERROR =
  "blk_update_request: I/O error, dev nvme1n1, sector 1234 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"
const XID = "NVRM: Xid (PCI:0000:44:00): 79, pid=0, GPU has fallen off the bus."
const reasons = (o: RuleOverrides, text: string, source = "dmesg" as const) =>
  compileRules(o)
    .match(source, text)
    .map((m) => m.reason)

const thrown = (f: () => unknown): InvalidRule => {
  try {
    f()
  } catch (e) {
    if (e instanceof InvalidRule) return e
    throw e
  }
  throw new Error("expected InvalidRule")
}

describe("rule overrides by id", () => {
  it("disables a built-in rule, and only that rule", () => {
    expect(reasons({}, LOCKUP)).toEqual(["SoftLockup"])
    const o: RuleOverrides = { rules: { "kernel.soft-lockup": { disabled: true } } }
    expect(reasons(o, LOCKUP)).toEqual([])
    expect(reasons(o, XID)).toEqual(["NvidiaXID79Error"])
    expect(effectiveRules(o).find((r) => r.rule.id === "kernel.soft-lockup")?.origin).toBe("disabled")
  })

  it("changes a built-in rule's severity and window, keeping its pattern", () => {
    const m = compileRules({
      rules: { "storage.block-io-error": { severity: "Event", minOccurrences: 3, windowSeconds: 60 } }
    }).match("dmesg", IO_ERROR)
    expect(m).toHaveLength(1)
    expect(m[0]).toMatchObject({
      reason: "BlockDeviceIOError",
      severity: "Event",
      minOccurrences: 3,
      windowSeconds: 60,
      subject: "nvme1n1"
    })
    expect(m[0]!.rule.id).toBe("storage.block-io-error")
  })

  it("replaces a built-in rule's pattern (literal derived again) and reports it as overridden", () => {
    const o: RuleOverrides = {
      rules: { "kernel.conntrack-full": { pattern: "conntrack table overflow on (?<zone>\\w+)" } }
    }
    expect(reasons(o, "nf_conntrack: table full, dropping packet")).toEqual([])
    expect(reasons(o, "conntrack table overflow on zone1")).toEqual(["ConntrackExceededKernel"])
    const r = effectiveRules(o).find((x) => x.rule.id === "kernel.conntrack-full")!
    expect(r.origin).toBe("overridden")
    expect(r.rule.literals).toBeUndefined()
    expect(r.rule.fixtures).toBeUndefined()
  })

  it("overrides the operator's own rules too", () => {
    const o: RuleOverrides = {
      extraRules: [{ id: "op.app", sources: ["dmesg"], reason: "AppCrash", pattern: "myapp crashed" }],
      rules: { "op.app": { severity: "Condition" } }
    }
    expect(compileRules(o).match("dmesg", "myapp crashed")[0]).toMatchObject({
      reason: "AppCrash",
      severity: "Condition"
    })
    expect(effectiveRules(o).find((x) => x.rule.id === "op.app")?.origin).toBe("operator")
  })

  it("extends: an operator rule in the built-ins' shape, with a templated reason and a group -> reason map", () => {
    const o: RuleOverrides = {
      extraRules: [
        {
          id: "op.xid-syslog",
          sources: ["file:/var/log/gpu.log"],
          reason: "NvidiaXID{code}Warning",
          reasonByGroup: { group: "code", reasons: { "79": "NvidiaXID{code}Error" } },
          pattern: "gpu (?<pci>\\S+) raised xid (?<code>\\d+)",
          subject: "{pci}"
        }
      ]
    }
    const m = compileRules(o)
    expect(m.match("file:/var/log/gpu.log", "gpu 0000:44:00 raised xid 79").map((x) => x.reason)).toEqual([
      "NvidiaXID79Error"
    ])
    expect(m.match("file:/var/log/gpu.log", "gpu 0000:44:00 raised xid 13").map((x) => x.reason)).toEqual([
      "NvidiaXID13Warning"
    ])
    // A group value is looked up among the map's own keys only.
    const words = compileRules({
      extraRules: [
        {
          id: "op.words",
          sources: ["dmesg"],
          reason: "AppCrash",
          reasonByGroup: { group: "w", reasons: { hang: "AppBlocked" } },
          pattern: "app event (?<w>\\w+)"
        }
      ]
    })
    for (const [word, reason] of [
      ["hang", "AppBlocked"],
      ["constructor", "AppCrash"],
      ["__proto__", "AppCrash"],
      ["toString", "AppCrash"]
    ])
      expect(
        words.match("dmesg", `app event ${word}`).map((x) => x.reason),
        word
      ).toEqual([reason])
    // The built-ins are all still there.
    expect(m.match("dmesg", LOCKUP).map((x) => x.reason)).toEqual(["SoftLockup"])
  })
})

describe("bad operator input", () => {
  it("names the rule and the override's field", () => {
    const e = thrown(() => compileRules({ rules: { "kernel.soft-lockup": { pattern: "(" } } }))
    expect(e.ruleId).toBe("kernel.soft-lockup")
    expect(e.field).toBe("logRuleOverrides.kernel.soft-lockup.pattern")
    expect(e.message).toMatch(/does not compile/)
    const r = thrown(() => compileRules({ rules: { "kernel.bug": { reason: "KernelBugg" } } }))
    expect(r.field).toBe("logRuleOverrides.kernel.bug.reason")
    const unknown = thrown(() => compileRules({ rules: { "kernel.no-such-rule": { disabled: true } } }))
    expect(unknown).toMatchObject({
      ruleId: "kernel.no-such-rule",
      field: "logRuleOverrides.kernel.no-such-rule"
    })
    const group = thrown(() =>
      compileRules({
        extraRules: [
          {
            id: "g",
            sources: ["dmesg"],
            reason: "KernelBug",
            reasonByGroup: { group: "nope", reasons: {} },
            pattern: "abc"
          }
        ]
      })
    )
    expect(group).toMatchObject({ ruleId: "g", field: "reasonByGroup.group" })
    const placeholder = thrown(() =>
      compileRules({
        extraRules: [{ id: "t", sources: ["dmesg"], reason: "NvidiaXID{code}Error", pattern: "abc" }]
      })
    )
    expect(placeholder).toMatchObject({ ruleId: "t", field: "reason" })
    const monitor = thrown(() =>
      compileRules({
        extraRules: [
          {
            id: "m",
            sources: ["dmesg"],
            reason: "KernelBug",
            reasonByGroup: { group: "x", reasons: { "1": "IPAMDNoIPs" } },
            pattern: "abc (?<x>\\d)"
          }
        ]
      })
    )
    expect(monitor).toMatchObject({ ruleId: "m", field: "reasonByGroup.reasons.1" })
  })

  it("with onInvalid, loses nothing: a bad override leaves the rule as it was, a bad rule is left out", () => {
    const errors: InvalidRule[] = []
    const m = compileRules(
      {
        rules: {
          "kernel.soft-lockup": { pattern: "(" },
          "kernel.no-such-rule": { disabled: true }
        },
        extraRules: [
          { id: "bad", sources: ["dmesg"], reason: "Nope", pattern: "abc" },
          { id: "good", sources: ["dmesg"], reason: "AppCrash", pattern: "myapp crashed" },
          { id: "good", sources: ["dmesg"], reason: "AppCrash", pattern: "twice" }
        ]
      },
      undefined,
      (e) => errors.push(e)
    )
    expect(errors.map((e) => [e.ruleId, e.field])).toEqual([
      ["good", "id"],
      ["kernel.no-such-rule", "logRuleOverrides.kernel.no-such-rule"],
      ["kernel.soft-lockup", "logRuleOverrides.kernel.soft-lockup.pattern"],
      ["bad", "reason"]
    ])
    expect(m.match("dmesg", LOCKUP).map((x) => x.reason)).toEqual(["SoftLockup"])
    expect(m.match("dmesg", "myapp crashed").map((x) => x.rule.id)).toEqual(["good"])
    expect(m.match("dmesg", XID).map((x) => x.reason)).toEqual(["NvidiaXID79Error"])
  })
})

describe("bad operator input, property", () => {
  it("any override of any rule, with onInvalid, never throws and never changes another rule's matches", () => {
    const ids = BUILTIN_RULES.map((r) => r.id)
    const baseline = compileRules()
    fc.assert(
      fc.property(
        fc.constantFrom(...ids),
        fc.record(
          {
            pattern: fc.oneof(
              fc.string({ maxLength: 12 }),
              fc.constantFrom("(", "(a+)+b", "a|b", "x(?<code>\\d+)")
            ),
            reason: fc.constantFrom("KernelBug", "Nope", "NvidiaXID{code}Error", "IPAMDNoIPs", ""),
            minOccurrences: fc.integer({ min: 1, max: 5 }),
            disabled: fc.boolean()
          },
          { requiredKeys: [] }
        ),
        (id, override) => {
          const errors: InvalidRule[] = []
          const m = compileRules({ rules: { [id]: override } }, undefined, (e) => errors.push(e))
          for (const e of errors) expect(e.ruleId).toBe(id)
          // Lines of the other rules' sources: the other rules match as before.
          for (const line of ["watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [x:1]", IO_ERROR, XID]) {
            const others = (ms: ReturnType<typeof m.match>) =>
              ms.filter((x) => x.rule.id !== id).map((x) => `${x.rule.id}:${x.reason}`)
            const before = others(baseline.match("dmesg", line))
            const after = others(m.match("dmesg", line))
            // The overridden rule can now win its monitor's line; every other monitor's match is unchanged.
            const monitorOf = (s: string) =>
              baseline.match("dmesg", line).find((x) => `${x.rule.id}:${x.reason}` === s)?.rule.monitor
            const overridden = m.match("dmesg", line).find((x) => x.rule.id === id)?.rule.monitor
            expect(after.filter((s) => monitorOf(s) !== overridden)).toEqual(
              before.filter((s) => monitorOf(s) !== overridden)
            )
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("config", () => {
  const ok = (text: string) => {
    const r = parseConfigText(text, "c.yaml")
    if (Result.isFailure(r)) throw new Error(r.failure.message)
    return r.success
  }
  it("maps logRuleOverrides and logRules onto the engine", () => {
    const config = ok(`
logRuleOverrides:
  kernel.soft-lockup: { disabled: true }
  storage.block-io-error: { minOccurrences: 2, windowSeconds: 60 }
logRules:
  - id: site.app-crash
    sources: [dmesg]
    reason: AppCrash
    pattern: "myapp\\\\[\\\\d+\\\\]: fatal"
    fixtures:
      matches: [{ source: dmesg, line: "myapp[12]: fatal", cite: "our own app" }]
`)
    const engine = makeLogRuleEngine(ruleOverridesFromConfig(config))
    expect(engine.matcher.match("dmesg", LOCKUP)).toEqual([])
    expect(engine.matcher.match("dmesg", IO_ERROR)[0]?.minOccurrences).toBe(2)
    expect(engine.matcher.match("dmesg", "myapp[12]: fatal").map((m) => m.rule.id)).toEqual([
      "site.app-crash"
    ])
  })
  it("rejects a malformed override naming the field", () => {
    const r = parseConfigText("logRuleOverrides:\n  kernel.bug: { minOccurrences: 0 }\n", "c.yaml")
    expect(Result.isFailure(r) && r.failure.field).toBe("logRuleOverrides.kernel.bug.minOccurrences")
    const s = parseConfigText("logRuleOverrides:\n  kernel.bug: { patern: x }\n", "c.yaml")
    expect(Result.isFailure(s) && s.failure.message).toMatch(/patern/)
  })
})

describe("built-in rules", () => {
  it("are checked against the catalog by the typechecker (this file fails `tsc` if a misspelled reason passes)", () => {
    const rule: BuiltinRule = {
      id: "typo",
      sources: ["dmesg"],
      // @ts-expect-error not a catalog reason
      reason: "SoftLokup",
      pattern: "x"
    }
    const templated: BuiltinRule = {
      id: "t",
      sources: ["dmesg"],
      reason: "NvidiaXID{code}Warning",
      pattern: "x"
    }
    // @ts-expect-error not a log source
    const source: BuiltinRule = { id: "s", sources: ["kmsg"], reason: "SoftLockup", pattern: "x" }
    expect([rule, templated, source]).toHaveLength(3)
  })

  it("every built-in rule compiles on the operators' path", () => {
    expect(() => compileRules({ extraRules: [] })).not.toThrow()
    expect(effectiveRules().every((r) => r.origin === "built-in")).toBe(true)
    expect(effectiveRules()).toHaveLength(BUILTIN_RULES.length)
  })
})
