/**
 * deploy/monitoring/nodemend-dashboard.json read back: its panels' PromQL with Grafana's variables replaced by
 * what Prometheus accepts (so promtool can parse it and the metric-name check can read it), and the metrics its
 * template variables list values of.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import type { NamedExpr } from "./alertRules.ts"

export const DASHBOARD_FILE = join(REPO_ROOT, "deploy", "monitoring", "nodemend-dashboard.json")

export interface DashboardTarget {
  readonly refId: string
  readonly expr: string
  readonly legendFormat?: string
  readonly datasource?: { readonly type: string; readonly uid: string }
}

export interface DashboardPanel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly description?: string
  readonly datasource?: { readonly type: string; readonly uid: string }
  readonly gridPos: { readonly h: number; readonly w: number; readonly x: number; readonly y: number }
  readonly targets?: ReadonlyArray<DashboardTarget>
}

export interface Dashboard {
  readonly uid: string
  readonly title: string
  readonly panels: ReadonlyArray<DashboardPanel>
  readonly templating: {
    readonly list: ReadonlyArray<{
      readonly name: string
      readonly type: string
      readonly definition?: string
    }>
  }
}

export const readDashboard = (path = DASHBOARD_FILE): Dashboard =>
  JSON.parse(readFileSync(path, "utf8")) as Dashboard

/** Grafana's variables as values Prometheus accepts: intervals as durations, a multi-value filter as `.*`. */
export const promqlOf = (expr: string): string =>
  expr
    .replaceAll("$__rate_interval", "5m")
    .replaceAll("$__interval", "1m")
    .replaceAll("$__range", "1h")
    .replace(/\$\{?[A-Za-z_]\w*\}?/g, ".*")

/** Every panel query, named by its panel and refId, with Grafana's variables replaced (promqlOf). */
export const panelQueries = (d: Dashboard): (NamedExpr & { readonly name: string })[] =>
  d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ name: `panel "${p.title}" ${t.refId}`, expr: promqlOf(t.expr) }))
  )

/** The template variables' `label_values(metric, label)` queries, as selectors of their metric. */
export const variableQueries = (d: Dashboard): (NamedExpr & { readonly name: string })[] =>
  d.templating.list.flatMap((v) => {
    const m = /^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*(\w+)\s*\)$/.exec(v.definition ?? "")
    return m === null ? [] : [{ name: `variable ${v.name}`, expr: `${m[1]}{${m[2]}=~".+"}` }]
  })
