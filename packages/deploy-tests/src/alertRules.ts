/**
 * Reads deploy/monitoring/nodemend-alerts.yaml and inspects its PromQL without a Prometheus: which metric
 * names and label matchers each expression uses, and a small syntax check (balanced brackets, closed strings,
 * known functions). Enough to catch a renamed metric or a typo before an alert silently never fires; not a
 * PromQL parser.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse as parseYaml } from "yaml"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

export const ALERTS_FILE = join(REPO_ROOT, "deploy", "monitoring", "nodemend-alerts.yaml")

export interface AlertRule {
  readonly alert: string
  readonly expr: string
  readonly for?: string
  readonly labels?: Record<string, string>
  readonly annotations?: Record<string, string>
}

/** A recording rule: `record` names the series its expression's result is stored as. */
export interface RecordingRule {
  readonly record: string
  readonly expr: string
  readonly labels?: Record<string, string>
}

export type Rule = AlertRule | RecordingRule

/** Anything with a PromQL expression and a name to report it by (a rule, a dashboard panel's query). */
export interface NamedExpr {
  readonly alert?: string
  readonly record?: string
  readonly name?: string
  readonly expr: string
}

export const exprName = (e: NamedExpr): string => e.alert ?? e.record ?? e.name ?? e.expr

export interface RuleGroup {
  readonly name: string
  readonly rules: ReadonlyArray<Rule>
}

export interface PrometheusRuleObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace?: string }
  readonly spec: { readonly groups: ReadonlyArray<RuleGroup> }
}

export const readAlertsFile = (path = ALERTS_FILE): PrometheusRuleObject =>
  parseYaml(readFileSync(path, "utf8")) as PrometheusRuleObject

export const isAlert = (r: Rule): r is AlertRule => "alert" in r
export const isRecord = (r: Rule): r is RecordingRule => "record" in r

export const alertsOf = (rule: PrometheusRuleObject): AlertRule[] =>
  rule.spec.groups.flatMap((g) => g.rules).filter(isAlert)
export const recordsOf = (rule: PrometheusRuleObject): RecordingRule[] =>
  rule.spec.groups.flatMap((g) => g.rules).filter(isRecord)

/** PromQL functions and aggregation operators these rules may call (a subset of Prometheus 2.x/3.x). */
const FUNCTIONS = new Set([
  "abs",
  "absent",
  "absent_over_time",
  "avg",
  "avg_over_time",
  "ceil",
  "changes",
  "clamp_min",
  "clamp_max",
  "count",
  "count_over_time",
  "delta",
  "deriv",
  "floor",
  "histogram_quantile",
  "increase",
  "irate",
  "label_replace",
  "max",
  "max_over_time",
  "min",
  "min_over_time",
  "quantile",
  "rate",
  "resets",
  "round",
  "scalar",
  "sum",
  "sum_over_time",
  "time",
  "timestamp",
  "topk",
  "vector"
])
/** Keywords that are not metric names: binary set operators, grouping and matching modifiers. */
const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset"
])

export interface ExprInfo {
  /** Metric names selected by the expression (instant or range vector selectors). */
  readonly metrics: ReadonlyArray<string>
  /** Label names used in matchers, per metric name. */
  readonly matcherLabels: ReadonlyArray<{ readonly metric: string; readonly label: string }>
  /** Syntax problems; empty when the checks pass. */
  readonly errors: ReadonlyArray<string>
}

const IDENT = /[A-Za-z_:][A-Za-z0-9_:]*/y

/** Scans one expression: string literals, brackets, identifiers; reports what it selects and what is wrong. */
export const inspectExpr = (expr: string): ExprInfo => {
  const errors: string[] = []
  const metrics: string[] = []
  const matcherLabels: { metric: string; label: string }[] = []
  const stack: string[] = []
  const closing: Record<string, string> = { ")": "(", "]": "[", "}": "{" }
  let lastMetric: string | undefined
  // After by/without/on/ignoring/group_*: the next (...) is a list of label names, not an expression.
  let labelListNext = false
  let inLabelList = false
  let i = 0
  const skipSpace = (j: number) => {
    while (j < expr.length && /\s/.test(expr[j]!)) j++
    return j
  }
  while (i < expr.length) {
    const ch = expr[i]!
    if (/\s/.test(ch)) {
      i++
      continue
    }
    if (ch === '"' || ch === "'" || ch === "`") {
      const end = expr.indexOf(ch, i + 1)
      if (end < 0) {
        errors.push(`unterminated string at ${i}`)
        break
      }
      i = end + 1
      continue
    }
    if (ch === "(" || ch === "[" || ch === "{") {
      if (ch === "(" && labelListNext) inLabelList = true
      labelListNext = false
      stack.push(ch)
      if (ch === "[") {
        // A range or subquery: durations only, e.g. [5m] or [1h:1m].
        const end = expr.indexOf("]", i)
        const body = end < 0 ? "" : expr.slice(i + 1, end)
        if (end < 0 || !/^\s*\d+[smhdwy](\d+[smhdwy])*\s*(:\s*(\d+[smhdwy])*\s*)?$/.test(body))
          errors.push(`bad range [${body}] at ${i}`)
        if (end >= 0) {
          stack.pop()
          i = end + 1
          continue
        }
      }
      i++
      continue
    }
    if (ch === ")" || ch === "]" || ch === "}") {
      if (stack.pop() !== closing[ch]) errors.push(`unbalanced ${ch} at ${i}`)
      if (ch === ")") inLabelList = false
      i++
      continue
    }
    IDENT.lastIndex = i
    const m = IDENT.exec(expr)
    if (m !== null && !/[0-9.]/.test(expr[i - 1] ?? "")) {
      const word = m[0]
      i += word.length
      const inBraces = stack.at(-1) === "{"
      if (inBraces) {
        // A label matcher: name op "value".
        const op = /^\s*(=~|!~|!=|=)/.exec(expr.slice(i))
        if (op === null) errors.push(`label ${word} without a matcher at ${i}`)
        else if (lastMetric !== undefined) matcherLabels.push({ metric: lastMetric, label: word })
        continue
      }
      if (inLabelList) continue
      const lower = word.toLowerCase()
      if (KEYWORDS.has(lower)) {
        if (["by", "without", "on", "ignoring", "group_left", "group_right"].includes(lower)) {
          labelListNext = true
          if (expr[skipSpace(i)] !== "(") errors.push(`${word} without a label list at ${i}`)
        }
        continue
      }
      // A call, or an aggregation with its grouping first: `sum by (pool) (...)`.
      if (expr[skipSpace(i)] === "(" || /^\s*(by|without)\s*\(/i.test(expr.slice(i))) {
        if (!FUNCTIONS.has(word)) errors.push(`unknown function ${word}`)
        continue
      }
      metrics.push(word)
      lastMetric = word
      continue
    }
    // Numbers, durations after offset, operators.
    if (/[0-9.]/.test(ch)) {
      const num = /^[0-9.]+(e[+-]?\d+)?[smhdwy]?/i.exec(expr.slice(i))
      i += num?.[0].length ?? 1
      continue
    }
    if (/[-+*/%^<>=!~,]/.test(ch)) {
      i++
      continue
    }
    errors.push(`unexpected ${JSON.stringify(ch)} at ${i}`)
    i++
  }
  if (stack.length > 0) errors.push(`unclosed ${stack.join("")}`)
  if (metrics.length === 0 && !/vector\s*\(/.test(expr)) errors.push("selects no metric")
  return { metrics: [...new Set(metrics)], matcherLabels, errors }
}

/** Prometheus text exposition: every sample's metric name and its label names (label values are not needed). */
export const parseExposition = (text: string): Map<string, Set<string>> => {
  const out = new Map<string, Set<string>>()
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{([^}]*)\})?\s/.exec(line)
    if (m === null) continue
    const labels = out.get(m[1]!) ?? new Set<string>()
    for (const l of (m[3] ?? "").matchAll(/([A-Za-z_][A-Za-z0-9_]*)="/g)) labels.add(l[1]!)
    out.set(m[1]!, labels)
  }
  return out
}

/** Prometheus text exposition: the `# TYPE` of every metric family. */
export const exposedTypes = (text: string): Map<string, string> =>
  new Map([...text.matchAll(/^# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) (\w+)$/gm)].map((m) => [m[1]!, m[2]!]))

/**
 * `served` with the series the recording rules make: each recorded name "served" with the labels of the served
 * series its expression selects (a recording rule whose own metrics are not served records nothing), in order, so
 * a record built on another record counts too. Approximate: an aggregation's dropped labels are not taken away.
 */
export const withRecorded = (
  served: ReadonlyMap<string, ReadonlySet<string>>,
  records: ReadonlyArray<RecordingRule>
): Map<string, ReadonlySet<string>> => {
  const out = new Map(served)
  for (const r of records) {
    const sources = inspectExpr(r.expr).metrics
    if (!sources.every((m) => out.has(m))) continue
    out.set(r.record, new Set([...sources.flatMap((m) => [...out.get(m)!]), ...Object.keys(r.labels ?? {})]))
  }
  return out
}

/** The served metrics a rule or query reads, through the recording rules it uses (recorded names resolved). */
export const sourceMetrics = (expr: string, records: ReadonlyArray<RecordingRule>): string[] => {
  const byName = new Map(records.map((r) => [r.record, r]))
  const seen = new Set<string>()
  const walk = (e: string): string[] =>
    inspectExpr(e).metrics.flatMap((m) => {
      const r = byName.get(m)
      if (r === undefined) return [m]
      if (seen.has(m)) return []
      seen.add(m)
      return walk(r.expr)
    })
  return [...new Set(walk(expr))]
}

/**
 * What rules (or dashboard queries) use that the scraped binaries do not serve: unknown metric names and matcher
 * labels. Names recorded by the recording rules among `exprs` and in `records` count as served when their own
 * expressions' metrics are.
 */
export const missingFromExposition = (
  exprs: ReadonlyArray<NamedExpr>,
  served: ReadonlyMap<string, ReadonlySet<string>>,
  records: ReadonlyArray<RecordingRule> = []
): string[] => {
  const all = withRecorded(served, [
    ...records,
    ...exprs.filter((e): e is RecordingRule => e.record !== undefined)
  ])
  return exprs.flatMap((a) => {
    const info = inspectExpr(a.expr)
    return [
      ...info.metrics.filter((m) => !all.has(m)).map((m) => `${exprName(a)}: metric ${m} is not served`),
      ...info.matcherLabels
        .filter(({ metric, label }) => all.has(metric) && !all.get(metric)!.has(label))
        .map(({ metric, label }) => `${exprName(a)}: ${metric} has no label ${label}`)
    ]
  })
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export const markdownAnchors = (markdown: string): Set<string> =>
  new Set(
    [...markdown.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-")
    )
  )
