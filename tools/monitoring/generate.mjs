// The chart's monitoring files are generated from deploy/monitoring, their one source, and the dashboard from its
// description:
//   deploy/monitoring/nodemend-alerts.yaml -> deploy/helm/nodemend/templates/prometheusrule.yaml (the same groups,
//     each inside the `if` of the binary it watches, `{{` escaped for Helm);
//   tools/monitoring/dashboard.mjs -> deploy/monitoring/nodemend-dashboard.json -> the chart's
//     dashboards/nodemend-dashboard.json (the same bytes; templates/grafana-dashboard.yaml reads it).
// A unit test (packages/deploy-tests/test/promtool.test.ts, "one source") fails when a committed file differs from
// what this prints, so an edit that was not regenerated cannot ship.
//
//   node tools/monitoring/generate.mjs          write the chart's copies
//   node tools/monitoring/generate.mjs --check  exit 1 (naming the files) when a copy is out of date
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { REPO_ROOT } from "../cluster/versions.mjs"
import { dashboard } from "./dashboard.mjs"

export const MONITORING_DIR = join(REPO_ROOT, "deploy", "monitoring")
export const CHART_DIR = join(REPO_ROOT, "deploy", "helm", "nodemend")
export const ALERTS_SOURCE = join(MONITORING_DIR, "nodemend-alerts.yaml")
export const RULE_TEMPLATE = join(CHART_DIR, "templates", "prometheusrule.yaml")
export const DASHBOARD_FILE = join(MONITORING_DIR, "nodemend-dashboard.json")
export const CHART_DASHBOARD_FILE = join(CHART_DIR, "dashboards", "nodemend-dashboard.json")

/** The dashboard as written: two-space JSON, a final newline. */
export const dashboardText = () => `${JSON.stringify(dashboard(), null, 2)}\n`

const HEADER = `{{- if .Values.monitoring.prometheusRule.enabled }}
# GENERATED from deploy/monitoring/nodemend-alerts.yaml by tools/monitoring/generate.mjs: edit that file and run
# \`npm run monitoring:generate\` (a unit test fails when this copy is out of date). Each group only when its binary
# is installed. What to do when an alert fires: docs/operations.md.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: nodemend
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "nodemend.labels" (dict "name" "nodemend" "root" .) | nindent 4 }}
    {{- with .Values.monitoring.prometheusRule.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
`

/** Which chart value installs the binary a group watches (by its name's prefix). */
const groupCondition = (name) => {
  if (name.startsWith("nodemend-controller")) return ".Values.controller.enabled"
  if (name.startsWith("nodemend-agent")) return ".Values.agent.enabled"
  throw new Error(`rule group ${name}: neither nodemend-controller* nor nodemend-agent*`)
}

/** Helm would read `{{` in a rule (a Prometheus template in an annotation) as its own: print it literally. */
const escapeHelm = (text) => text.replaceAll("{{", '{{ "{{" }}')

/**
 * The chart template for `source` (the text of nodemend-alerts.yaml): its `spec.groups` entries as they are
 * written there, comments included, each wrapped in its binary's `if`.
 */
export function ruleTemplate(source) {
  const lines = source.split("\n")
  const start = lines.indexOf("  groups:")
  if (start < 0) throw new Error("nodemend-alerts.yaml: no `  groups:` line under spec")
  const groups = []
  for (const line of lines.slice(start + 1)) {
    const m = /^ {4}- name: (\S+)\s*$/.exec(line)
    if (m) groups.push({ name: m[1], lines: [line] })
    else if (groups.length === 0) {
      if (line.trim() !== "")
        throw new Error(`nodemend-alerts.yaml: unexpected line before the first group: ${line}`)
    } else groups.at(-1).lines.push(line)
  }
  let out = HEADER
  for (const g of groups) {
    while (g.lines.at(-1)?.trim() === "") g.lines.pop()
    out += `    {{- if ${groupCondition(g.name)} }}\n${escapeHelm(g.lines.join("\n"))}\n    {{- end }}\n`
  }
  return `${out}{{- end }}\n`
}

/** Every generated file: its path and the text it must have. */
export function generated() {
  return [
    { path: RULE_TEMPLATE, text: ruleTemplate(readFileSync(ALERTS_SOURCE, "utf8")) },
    { path: DASHBOARD_FILE, text: dashboardText() },
    { path: CHART_DASHBOARD_FILE, text: dashboardText() }
  ]
}

/** The generated files whose committed text differs (repository-relative paths). */
export function stale() {
  return generated()
    .filter(({ path, text }) => {
      try {
        return readFileSync(path, "utf8") !== text
      } catch {
        return true
      }
    })
    .map(({ path }) => relative(REPO_ROOT, path))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes("--check")) {
    const out = stale()
    if (out.length > 0) {
      console.error(`out of date (run npm run monitoring:generate): ${out.join(", ")}`)
      process.exit(1)
    }
  } else
    for (const { path, text } of generated()) {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, text)
      console.log(`wrote ${relative(REPO_ROOT, path)}`)
    }
}
