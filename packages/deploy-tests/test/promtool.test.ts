// promtool on deploy/monitoring/nodemend-alerts.yaml: `promtool check rules` accepts every group (a real PromQL
// parser, unlike the small check in alertRules.test.ts), and `promtool test rules` runs
// test/promtool/alerts.test.yaml, where every alert fires when its condition holds and stays quiet otherwise.
// The tests can fail: a rule whose threshold moved, or a case that expects silence where the alert fires, makes
// promtool exit non-zero and name the alert. The chart's PrometheusRule is generated from the same file
// (tools/monitoring/generate.mjs) and must be up to date.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { stale } from "../../../tools/monitoring/generate.mjs"
import { alertsOf, readAlertsFile } from "../src/alertRules.ts"
import { promtool, readRuleTests, ruleFileText, testRules } from "../src/promtool.ts"

const file = readAlertsFile()
const alerts = alertsOf(file)
const tests = readRuleTests(join(import.meta.dirname, "promtool", "alerts.test.yaml"))
const scratch = mkdtempSync(join(tmpdir(), "nodemend-promtool-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
let runs = 0
const dir = () => join(scratch, String(runs++))

describe("promtool", () => {
  it("check rules: every group of nodemend-alerts.yaml parses and is a valid rule", () => {
    const path = join(scratch, "rules.yaml")
    writeFileSync(path, ruleFileText(file))
    const r = promtool(["check", "rules", path])
    const rules = file.spec.groups.flatMap((g) => g.rules).length
    expect(rules).toBeGreaterThan(alerts.length)
    expect(r.output).toMatch(new RegExp(`SUCCESS: ${rules} rules found`))
    expect(r.status, r.output).toBe(0)
  })

  it("check rules: a broken expression is refused", () => {
    const path = join(scratch, "broken.yaml")
    const broken = structuredClone(file)
    ;(broken.spec.groups[0]!.rules[0] as { expr: string }).expr =
      "max by (pool (nodemend_controller_breaker_open) == 1"
    writeFileSync(path, ruleFileText(broken))
    const r = promtool(["check", "rules", path])
    expect(r.status).not.toBe(0)
    expect(r.output).toMatch(/parse error/)
  })

  it("test rules: every case of test/promtool/alerts.test.yaml passes", () => {
    const r = testRules(dir(), file, alerts, tests)
    expect(r.output).toMatch(/SUCCESS/)
    expect(r.status, r.output).toBe(0)
  })

  it.each(alerts.map((a) => [a.alert] as const))(
    "%s: has a case where it fires and one where it stays quiet",
    (name) => {
      const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []).filter((c) => c.alertname === name)
      expect(cases.some((c) => (c.exp_alerts ?? []).length > 0)).toBe(true)
      expect(cases.some((c) => (c.exp_alerts ?? []).length === 0)).toBe(true)
    }
  )

  it("every case names an alert of the file", () => {
    const names = new Set(alerts.map((a) => a.alert))
    for (const c of tests.tests.flatMap((t) => t.alert_rule_test ?? [])) expect(names).toContain(c.alertname)
  })

  it("the tests can fail: an alert that fires where a case expects silence, a threshold that moved", () => {
    // A case expecting NodemendBreakerOpen to fire now expects silence.
    const silenced = structuredClone(tests)
    const firing = silenced.tests
      .flatMap((t) => t.alert_rule_test ?? [])
      .find((c) => c.alertname === "NodemendBreakerOpen" && (c.exp_alerts ?? []).length > 0)!
    ;(firing as unknown as { exp_alerts: unknown[] }).exp_alerts = []
    const r1 = testRules(dir(), file, alerts, silenced)
    expect(r1.status).not.toBe(0)
    expect(r1.output).toMatch(/alertname: NodemendBreakerOpen/)

    // The rule's threshold moved: the breaker never counts as open, the firing case fails.
    const moved = structuredClone(file)
    const rule = alertsOf(moved).find((r) => r.alert === "NodemendBreakerOpen") as { expr: string }
    rule.expr = rule.expr.replace("== 1", "== 2")
    const r2 = testRules(dir(), moved, alertsOf(moved), tests)
    expect(r2.status).not.toBe(0)
    expect(r2.output).toMatch(/alertname: NodemendBreakerOpen/)
  })
})

describe("one source", () => {
  it("the chart's generated copies are up to date (npm run monitoring:generate)", () => {
    expect(stale()).toEqual([])
  })
})
