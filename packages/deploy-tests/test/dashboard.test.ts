// deploy/monitoring/nodemend-dashboard.json: every panel query parses (promtool check rules, each query as a
// recording rule), reads what the alerts share through the recording rules of nodemend-alerts.yaml, and names
// only metrics the binaries declare (the real scrape is test/cluster/alertRules.test.ts's); every alert has a
// panel. The chart ships it as a ConfigMap for Grafana's sidecar, off by default.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { alertsOf, inspectExpr, readAlertsFile, recordsOf, sourceMetrics } from "../src/alertRules.ts"
import {
  type Dashboard,
  DASHBOARD_FILE,
  panelQueries,
  readDashboard,
  variableQueries
} from "../src/dashboard.ts"
import { AWS_REQUIRED_VALUES, find, type KubeObject, lint, render } from "../src/index.ts"
import { documentedMetrics } from "../src/operationsDoc.ts"
import { promtool } from "../src/promtool.ts"

const dashboard = readDashboard()
const queries = panelQueries(dashboard)
const rulesFile = readAlertsFile()
const records = recordsOf(rulesFile)
const alerts = alertsOf(rulesFile)
const panels = dashboard.panels.filter((p) => p.type !== "row")
/** Grafana's data source variable. */
const DS_UID = "$" + "{datasource}"
const scratch = mkdtempSync(join(tmpdir(), "nodemend-dashboard-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The queries as recording rules of one group (a record name per query), for `promtool check rules`. */
const asRuleFile = (exprs: ReadonlyArray<{ expr: string }>) =>
  stringify({
    groups: [
      {
        name: "dashboard",
        rules: exprs.map((q, i) => ({ record: `dashboard:query_${i}:check`, expr: q.expr }))
      }
    ]
  })

describe("nodemend-dashboard.json", () => {
  it("has panels, each with a description, the data source variable and at least one query", () => {
    expect(dashboard.uid).toBe("nodemend")
    expect(panels.length).toBeGreaterThanOrEqual(10)
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length)
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "pool", "node"])
    for (const p of panels) {
      expect(p.description, p.title).toBeTruthy()
      expect(p.datasource?.uid, p.title).toBe(DS_UID)
      expect(p.targets?.length, p.title).toBeGreaterThan(0)
      for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe(DS_UID)
    }
  })

  it("panels fit the 24-column grid and do not overlap", () => {
    const cells = new Set<string>()
    for (const p of dashboard.panels) {
      const g = p.gridPos
      expect(g.x + g.w, p.title).toBeLessThanOrEqual(24)
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false)
          cells.add(`${x},${y}`)
        }
    }
  })

  it("promtool check rules: every panel query parses", () => {
    const path = join(scratch, "queries.yaml")
    writeFileSync(path, asRuleFile(queries))
    const r = promtool(["check", "rules", path])
    expect(r.output).toMatch(new RegExp(`SUCCESS: ${queries.length} rules found`))
    expect(r.status, r.output).toBe(0)
  })

  it("promtool check rules: a panel query that does not parse is refused", () => {
    const path = join(scratch, "broken.yaml")
    writeFileSync(path, asRuleFile([...queries, { expr: "sum by (pool (nodemend_controller_pool_nodes)" }]))
    const r = promtool(["check", "rules", path])
    expect(r.status).not.toBe(0)
  })

  it("every query passes the small PromQL check (which the metric-name check reads)", () => {
    for (const q of [...queries, ...variableQueries(dashboard)])
      expect(inspectExpr(q.expr).errors, q.name).toEqual([])
  })

  it("every recording rule is read by a panel, and every recorded name a panel reads is recorded", () => {
    const read = new Set(queries.flatMap((q) => inspectExpr(q.expr).metrics))
    for (const r of records) expect(read, r.record).toContain(r.record)
    const recorded = new Set(records.map((r) => r.record))
    for (const m of read) if (m.includes(":")) expect(recorded, m).toContain(m)
  })

  it("every alert has a panel that says it supports it", () => {
    const named = panels.map((p) => p.description ?? "").join("\n")
    for (const a of alerts) expect(named, a.alert).toMatch(new RegExp(`Alert: [^.]*\\b${a.alert}\\b`))
  })

  it("every metric a panel or variable reads is one the binaries declare (docs/operations.md's tables)", () => {
    const declared = new Set(
      [...documentedMetrics("Controller"), ...documentedMetrics("Agent")].flatMap((m) =>
        m.type === "histogram" ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name]
      )
    )
    for (const q of [...queries, ...variableQueries(dashboard)])
      for (const m of sourceMetrics(q.expr, records)) expect(declared, `${q.name}: ${m}`).toContain(m)
  })
})

describe("the chart's dashboard ConfigMap", () => {
  type ConfigMap = KubeObject & { data: Record<string, string> }
  const enabled = (extra: Record<string, unknown> = {}) =>
    render({
      namespace: "nodemend-system",
      values: { ...AWS_REQUIRED_VALUES, monitoring: { grafanaDashboard: { enabled: true, ...extra } } }
    })

  it("is off by default", () => {
    expect(
      render({ values: AWS_REQUIRED_VALUES }).filter((o) => o.metadata.name === "nodemend-dashboard")
    ).toEqual([])
  })

  it("carries the dashboard unchanged, labelled for Grafana's sidecar, in the release namespace or the one set", () => {
    const cm = find(enabled(), "ConfigMap", "nodemend-dashboard") as ConfigMap
    expect(cm.metadata.namespace).toBe("nodemend-system")
    expect((cm.metadata as { labels?: Record<string, string> }).labels).toMatchObject({
      grafana_dashboard: "1",
      "app.kubernetes.io/part-of": "nodemend"
    })
    expect(cm.data["nodemend-dashboard.json"]).toBe(readFileSync(DASHBOARD_FILE, "utf8"))
    expect((JSON.parse(cm.data["nodemend-dashboard.json"]!) as Dashboard).uid).toBe("nodemend")

    const moved = find(
      enabled({
        namespace: "monitoring",
        labels: { team: "sre" },
        annotations: { grafana_folder: "Kubernetes" }
      }),
      "ConfigMap",
      "nodemend-dashboard"
    ) as ConfigMap
    expect(moved.metadata.namespace).toBe("monitoring")
    expect((moved.metadata as { labels?: Record<string, string> }).labels).toMatchObject({ team: "sre" })
    expect((moved.metadata as { annotations?: Record<string, string> }).annotations).toEqual({
      grafana_folder: "Kubernetes"
    })
  })

  it("helm lint --strict passes with it and the rules enabled; the schema refuses an unknown key", () => {
    const r = lint({
      ...AWS_REQUIRED_VALUES,
      monitoring: { prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true } }
    })
    expect(r.stderr + r.stdout).not.toMatch(/\[ERROR\]|\[WARNING\]/)
    expect(r.status).toBe(0)
    expect(() => enabled({ folder: "x" })).toThrow(/grafanaDashboard|folder/)
  })
})
