/**
 * promtool (Debian's `prometheus` package; tools/prereqs.mjs installs it for the unit phase) on nodemend's rules:
 * `check rules` on a PrometheusRule's groups written as a plain rule file, `test rules` on a unit-test file whose
 * rule_files point at it. The unit-test files state when an alert fires and with which labels; the expected
 * annotations are the alert's own (static text), filled in here so that the tests do not repeat them.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parse as parseYaml, stringify } from "yaml"
import type { AlertRule, PrometheusRuleObject } from "./alertRules.ts"

export interface PromtoolResult {
  readonly status: number
  readonly output: string
}

export const promtool = (args: ReadonlyArray<string>, cwd?: string): PromtoolResult => {
  const r = spawnSync("promtool", args, { cwd, encoding: "utf8" })
  if (r.error) throw r.error
  return { status: r.status ?? 1, output: `${r.stdout}${r.stderr}` }
}

/** The PrometheusRule's groups as a Prometheus rule file (what `rule_files` and `promtool check rules` read). */
export const ruleFileText = (rule: PrometheusRuleObject): string => stringify({ groups: rule.spec.groups })

export interface AlertTestCase {
  readonly eval_time: string
  readonly alertname: string
  readonly exp_alerts?: ReadonlyArray<{
    readonly exp_labels?: Record<string, string>
    readonly exp_annotations?: Record<string, string>
  }>
}

export interface RuleTestFile {
  rule_files: string[]
  evaluation_interval?: string
  tests: ReadonlyArray<{
    readonly interval?: string
    readonly input_series: ReadonlyArray<{ readonly series: string; readonly values: string }>
    readonly alert_rule_test?: ReadonlyArray<AlertTestCase>
    readonly promql_expr_test?: ReadonlyArray<unknown>
  }>
}

export const readRuleTests = (path: string): RuleTestFile =>
  parseYaml(readFileSync(path, "utf8")) as RuleTestFile

/** The test file with every expected alert's annotations filled in from the alert (unless the case names them). */
export const withAnnotations = (tests: RuleTestFile, alerts: ReadonlyArray<AlertRule>): RuleTestFile => {
  const byName = new Map(alerts.map((a) => [a.alert, a]))
  return {
    ...tests,
    tests: tests.tests.map((t) => ({
      ...t,
      alert_rule_test: t.alert_rule_test?.map((c) => ({
        ...c,
        exp_alerts: c.exp_alerts?.map((e) => ({
          ...e,
          exp_annotations: e.exp_annotations ?? byName.get(c.alertname)?.annotations ?? {}
        }))
      }))
    }))
  }
}

/**
 * Writes `rule`'s groups as rule_files[0] of `tests` into `dir`, and the tests (annotations filled in) next to
 * it; runs `promtool test rules`.
 */
export const testRules = (
  dir: string,
  rule: PrometheusRuleObject,
  alerts: ReadonlyArray<AlertRule>,
  tests: RuleTestFile
): PromtoolResult => {
  mkdirSync(dir, { recursive: true })
  const ruleFile = tests.rule_files[0]
  if (ruleFile === undefined) throw new Error("the test file names no rule file")
  writeFileSync(join(dir, ruleFile), ruleFileText(rule))
  writeFileSync(join(dir, "tests.yaml"), stringify(withAnnotations(tests, alerts)))
  return promtool(["test", "rules", "tests.yaml"], dir)
}
