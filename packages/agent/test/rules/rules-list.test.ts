/**
 * Issue #27: `nodemend-agent rules list` shows every rule, built-in and the operator's, after the config's
 * overrides, with origin, sources, reason, severity, window and fixtures; `-o json` in the `logRules` shape.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type ListedRule, runRulesList } from "../../src/cli/rules-list.ts"
import { BUILTIN_RULES } from "../../src/rules/index.ts"

const run = async (args: string[]) => {
  let out = ""
  let err = ""
  const code = await runRulesList(
    args,
    { write: (s: string) => (out += s) },
    { write: (s: string) => (err += s) }
  )
  return { code, out, err }
}
const dir = mkdtempSync(join(tmpdir(), "nodemend-rules-list-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const configFile = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const CONFIG = `
monitors:
  neuron: { enabled: false }
  kernel:
    reasons:
      AppBlocked: { disabled: true }
logRuleOverrides:
  kernel.soft-lockup: { disabled: true }
  storage.block-io-error: { severity: Event, minOccurrences: 3, windowSeconds: 60 }
logRules:
  - id: site.myapp
    sources: [journal:myapp]
    reason: AppCrash
    pattern: "myapp panicked: (?<why>.*)"
    fixtures:
      matches: [{ source: journal:myapp, line: "myapp panicked: nil map", cite: "our runbook" }]
`

describe("rules list", () => {
  it("-o json: every built-in rule with its fixtures, in the logRules shape", async () => {
    const { code, out, err } = await run(["-o", "json"])
    expect(err).toBe("")
    expect(code).toBe(0)
    const rules = JSON.parse(out) as ListedRule[]
    expect(rules.map((r) => r.id)).toEqual(BUILTIN_RULES.map((r) => r.id))
    expect(rules.every((r) => r.origin === "built-in" && (r.fixtures?.matches?.length ?? 0) > 0)).toBe(true)
    const xid = rules.find((r) => r.id === "nvidia.xid")!
    expect(xid).toMatchObject({ reason: "NvidiaXID{code}Warning", monitor: "nvidia", severity: "Event" })
    expect(xid.reasonByGroup?.reasons["79"]).toBe("NvidiaXID{code}Error")
    expect(typeof xid.pattern).toBe("string")
  })

  it("shows the config's changes: overridden, disabled (by id, monitor, reason) and the operator's rules", async () => {
    const path = configFile("c.yaml", CONFIG)
    const { code, out } = await run(["--config", path, "-o", "json"])
    expect(code).toBe(0)
    const rules = JSON.parse(out) as ListedRule[]
    const byId = new Map(rules.map((r) => [r.id, r]))
    expect(byId.get("kernel.soft-lockup")).toMatchObject({ origin: "disabled", disabledBy: "rule" })
    expect(byId.get("storage.block-io-error")).toMatchObject({
      origin: "overridden",
      severity: "Event",
      minOccurrences: 3,
      windowSeconds: 60
    })
    expect(byId.get("neuron.sram")).toMatchObject({ origin: "built-in", disabledBy: "monitor" })
    expect(byId.get("kernel.hung-task")).toMatchObject({ origin: "built-in", disabledBy: "reason" })
    expect(byId.get("site.myapp")).toMatchObject({
      origin: "operator",
      reason: "AppCrash",
      sources: ["journal:myapp"]
    })
    expect(rules.at(-1)!.id).toBe("site.myapp")
  })

  it("text: a line per rule with id, origin, reason, severity, window and sources, then pattern and fixtures", async () => {
    const path = configFile("t.yaml", CONFIG)
    const { code, out } = await run(["--config", path])
    expect(code).toBe(0)
    const lines = out.split("\n")
    expect(lines[0]).toMatch(/^ID\s+ORIGIN\s+REASON\s+SEVERITY\s+WINDOW\s+SOURCES$/)
    expect(lines).toContainEqual(expect.stringMatching(/^kernel\.soft-lockup\s+disabled\s+SoftLockup\s/))
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^storage\.block-io-error\s+overridden\s+BlockDeviceIOError\s+Event\s+3 in 60s\s+dmesg$/
      )
    )
    expect(lines).toContainEqual(
      expect.stringMatching(/^site\.myapp\s+operator\s+AppCrash\s+Event\s+each\s+journal:myapp$/)
    )
    expect(lines).toContainEqual("    + journal:myapp: myapp panicked: nil map  [our runbook]")
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}- dmesg: Memory cgroup out of memory: /))
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {4}reason NvidiaXID\{code\}Error when code is 46,48,/)
    )
  })

  it("--source keeps the rules that read it", async () => {
    const { out } = await run(["--source", "journal:systemd", "-o", "json"])
    const ids = (JSON.parse(out) as ListedRule[]).map((r) => r.id)
    expect(ids).toEqual(["runtime.kubelet-failed", "runtime.service-failed-to-start"])
  })

  it("lists a rule or override that cannot run with its error naming the field, and exits 2", async () => {
    const path = configFile(
      "bad.yaml",
      `logRuleOverrides:\n  kernel.bug: { pattern: "(" }\n  kernel.nope: { disabled: true }\n`
    )
    const { code, out, err } = await run(["--config", path, "-o", "json"])
    expect(code).toBe(2)
    const bug = (JSON.parse(out) as ListedRule[]).find((r) => r.id === "kernel.bug")!
    expect(bug.error).toMatch(/field logRuleOverrides\.kernel\.bug\.pattern: pattern does not compile/)
    expect(err).toContain("invalid log rule kernel.bug, field logRuleOverrides.kernel.bug.pattern")
    expect(err).toContain("invalid log rule kernel.nope, field logRuleOverrides.kernel.nope: no built-in")
  })

  it("usage errors exit 64", async () => {
    expect((await run(["-o", "yaml"])).code).toBe(64)
    expect((await run(["--nope"])).code).toBe(64)
  })

  it("runs as `nodemend-agent rules list` in a spawned process", () => {
    const node = resolve(__dirname, "../../../../node_modules/.bin/node")
    const main = resolve(__dirname, "../../src/main.ts")
    const result = spawnSync(node, ["--conditions=source", main, "rules", "list", "--source", "dmesg"], {
      encoding: "utf8",
      timeout: 60_000
    })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^kernel\.soft-lockup\s+built-in\s+SoftLockup\s/m)
    expect(result.stdout).toMatch(/^nvidia\.xid\s+built-in\s+NvidiaXID\{code\}Warning\s/m)
  }, 60_000)
})
