import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { parseConfigText } from "../../src/config/load.ts"
import { applyOverrides } from "../../src/config/overrides.ts"
import { DEFAULT_EXCLUDED_INTERFACES } from "../../src/config/schema.ts"
import type { Detection } from "../../src/model.ts"

const ok = (text: string) => {
  const r = parseConfigText(text, "c.yaml")
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}
const err = (text: string) => {
  const r = parseConfigText(text, "c.yaml")
  if (Result.isSuccess(r)) throw new Error("expected a ConfigError")
  return r.failure
}

describe("config file", () => {
  it("an empty file means every default", () => {
    const c = ok("")
    expect(c.heartbeatSeconds).toBe(300)
    expect(c.events).toEqual({ burst: 25, refillSeconds: 300 })
    expect(c.monitors.kernel.enabled).toBe(true)
    expect(c.monitors.kernel.thresholds.pidPercent).toBe(70)
    expect(c.monitors.networking.excludedInterfaceNameRegexps).toEqual(DEFAULT_EXCLUDED_INTERFACES)
    expect(c.monitors.storage.thresholds.ioDelaySeconds).toBe(10)
    expect(c.checkSpacingMillis).toBe(10)
  })

  it("reads overrides, thresholds and an explicit empty exclusion list", () => {
    const c = ok(`
heartbeatSeconds: 60
events: { burst: 5, refillSeconds: 10 }
monitors:
  kernel:
    reasons:
      LargeEnvironment: { disabled: true }
      SoftLockup: { severity: Condition }
    thresholds: { zombieCount: 50 }
  networking:
    enabled: false
    excludedInterfaceNameRegexps: []
    allowedIPTablesChains: ["filter/MY-CHAIN"]
  nvidia:
    reasons:
      "NvidiaXID{code}Error": { severity: Event }
checks:
  ipamd: { intervalSeconds: 1 }
`)
    expect(c.heartbeatSeconds).toBe(60)
    expect(c.monitors.kernel.reasons.SoftLockup).toEqual({ severity: "Condition" })
    expect(c.monitors.kernel.thresholds).toMatchObject({ zombieCount: 50, pidPercent: 70 })
    expect(c.monitors.networking.enabled).toBe(false)
    expect(c.monitors.networking.excludedInterfaceNameRegexps).toEqual([])
    expect(c.checks.ipamd).toEqual({ intervalSeconds: 1, enabled: true })
  })

  it("reads the networking thresholds (NPA) and per-check switches of the newer checks", () => {
    expect(ok("").monitors.networking.thresholds).toEqual({ npaNotRunningMinutes: 15, npaRestartsPerPoll: 5 })
    const c = ok(`
monitors:
  networking:
    thresholds: { npaNotRunningMinutes: 30, npaRestartsPerPoll: 10 }
checks:
  ipamd-state: { intervalSeconds: 60 }
  mac-address-policy: { enabled: false }
  npa: { intervalSeconds: 120 }
`)
    expect(c.monitors.networking.thresholds).toEqual({ npaNotRunningMinutes: 30, npaRestartsPerPoll: 10 })
    expect(c.checks["mac-address-policy"]).toEqual({ enabled: false })
  })

  it.each([
    ["bogus: 1", "bogus"],
    [
      "monitors: { networking: { thresholds: { npaRestartsPerPoll: 0 } } }",
      "monitors.networking.thresholds.npaRestartsPerPoll"
    ],
    [
      "monitors: { networking: { thresholds: { npaMinutes: 3 } } }",
      "monitors.networking.thresholds.npaMinutes"
    ],
    ["monitors: { kernel: { enable: true } }", "monitors.kernel.enable"],
    ["monitors: { gpu: { enabled: true } }", "monitors.gpu"],
    ["monitors: { kernel: { thresholds: { pidPercent: 170 } } }", "monitors.kernel.thresholds.pidPercent"],
    [
      "monitors: { kernel: { reasons: { NoSuchReason: { disabled: true } } } }",
      "monitors.kernel.reasons.NoSuchReason"
    ],
    [
      "monitors: { kernel: { reasons: { IPAMDNotRunning: { disabled: true } } } }",
      "monitors.kernel.reasons.IPAMDNotRunning"
    ],
    [
      "monitors: { kernel: { reasons: { SoftLockup: { severity: Fatal } } } }",
      "monitors.kernel.reasons.SoftLockup.severity"
    ],
    [
      "monitors: { networking: { excludedInterfaceNameRegexps: ['(('] } }",
      "monitors.networking.excludedInterfaceNameRegexps.0"
    ],
    [
      "monitors: { networking: { allowedIPTablesChains: ['nochain'] } }",
      "monitors.networking.allowedIPTablesChains.0"
    ],
    ["checks: { nope: { intervalSeconds: 1 } }", "checks.nope"],
    ["heartbeatSeconds: 0", "heartbeatSeconds"]
  ])("rejects %s naming %s", (text, field) => {
    const e = err(text)
    expect(e.field).toBe(field)
    expect(e.message).toContain(field)
  })

  it("refuses a log rule source naming no registered reader, naming the readers there are", () => {
    const e = err(`
logRules:
  - { id: my.rule, sources: ["syslog:/var/log/messages"], reason: SoftLockup, pattern: "x" }`)
    expect(e.field).toBe("logRules.0.sources.0")
    expect(e.message).toContain('unknown log reader "syslog" in "syslog:/var/log/messages"')
    expect(e.message).toContain("dmesg, journal:IDENT, file:/ABSOLUTE/PATH, podlogs:NAME")
    // A registered reader with an argument it does not take is refused too, with the reader's form.
    expect(
      err(`logRuleOverrides: { kernel.soft-lockup: { sources: ["file:var/log/x"] } }`).message
    ).toContain('"file:var/log/x" is not a file source: expected file:/ABSOLUTE/PATH')
    expect(
      ok(
        `logRules: [{ id: r, sources: ["journal:kubelet", "podlogs:aws-node"], reason: SoftLockup, pattern: x }]`
      ).logRules
    ).toHaveLength(1)
  })

  it("an unknown log reader stops the agent at start-up: exit 2, saying which", () => {
    const dir = mkdtempSync(join(tmpdir(), "nodemend-config-"))
    try {
      const config = join(dir, "agent.yaml")
      writeFileSync(
        config,
        'logRules: [{ id: my.rule, sources: ["syslog:/var/log/messages"], reason: SoftLockup, pattern: x }]\n'
      )
      const node = resolve(__dirname, "../../../../node_modules/.bin/node")
      const main = resolve(__dirname, "../../src/main.ts")
      const result = spawnSync(node, ["--conditions=source", main, "--node-name", "n1", "--config", config], {
        encoding: "utf8",
        timeout: 60_000
      })
      expect(result.status).toBe(2)
      expect(result.stderr).toContain(
        'logRules.0.sources.0: unknown log reader "syslog" in "syslog:/var/log/messages"'
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("rejects YAML that does not parse, and duplicate keys", () => {
    expect(err("monitors: [").message).toContain("YAML")
    expect(err("heartbeatSeconds: 1\nheartbeatSeconds: 2").message).toContain("YAML")
  })
})

describe("reason overrides", () => {
  const d = (reason: string, severity: "Condition" | "Event", monitor = "kernel"): Detection => ({
    _tag: "Detection",
    monitor: monitor as Detection["monitor"],
    reason,
    conditionType: monitor === "nvidia" ? "AcceleratedHardwareReady" : "KernelReady",
    severity,
    message: "m",
    observedAtMs: 0
  })
  const c = ok(`
monitors:
  kernel:
    reasons:
      LargeEnvironment: { disabled: true }
      SoftLockup: { severity: Condition }
  nvidia:
    reasons:
      "NvidiaXID{code}Error": { severity: Event }
      NvidiaXID79Error: { severity: Condition }
  storage: { enabled: false }
`)
  it("drops a disabled reason and a disabled monitor's findings", () => {
    expect(applyOverrides(c, d("LargeEnvironment", "Event"))).toBeUndefined()
    expect(applyOverrides(c, { ...d("IODelays", "Event"), monitor: "storage" })).toBeUndefined()
  })
  it("changes severity; the exact reason wins over the template", () => {
    expect(applyOverrides(c, d("SoftLockup", "Event"))?.severity).toBe("Condition")
    expect(applyOverrides(c, d("NvidiaXID31Error", "Condition", "nvidia"))?.severity).toBe("Event")
    expect(applyOverrides(c, d("NvidiaXID79Error", "Condition", "nvidia"))?.severity).toBe("Condition")
    expect(applyOverrides(c, d("AppCrash", "Event"))?.severity).toBe("Event")
  })
})

describe("deploy/agent/configmap.yaml", () => {
  it("embeds a config the agent accepts", async () => {
    const { readFileSync } = await import("node:fs")
    const { parse } = await import("yaml")
    const cm = parse(
      readFileSync(new URL("../../../../deploy/agent/configmap.yaml", import.meta.url), "utf8")
    ) as {
      data: Record<string, string>
    }
    const c = ok(cm.data["config.yaml"]!)
    expect(c.monitors.kernel.thresholds.zombieCount).toBe(20)
  })
})

describe("a disabled monitor's log rules", () => {
  it("are not compiled, so the sources only it reads are never opened", async () => {
    const { ruleOverridesFromConfig } = await import("../../src/config/rule-overrides.ts")
    const { compileRules } = await import("../../src/rules/index.ts")
    const all = compileRules(ruleOverridesFromConfig(ok("{}")))
    expect(all.sources).toContain("file:/var/log/aws-routed-eni/ipamd.log")
    expect(all.sources).toContain("podlogs:kube-proxy")
    const withoutNetworking = compileRules(
      ruleOverridesFromConfig(ok("monitors: { networking: { enabled: false } }"))
    )
    expect(withoutNetworking.sources).not.toContain("file:/var/log/aws-routed-eni/ipamd.log")
    expect(withoutNetworking.sources).not.toContain("podlogs:kube-proxy")
    expect(withoutNetworking.sources).toContain("dmesg")
    expect(
      withoutNetworking.match("dmesg", "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [x:1]")
    ).toHaveLength(1)
  })
})
