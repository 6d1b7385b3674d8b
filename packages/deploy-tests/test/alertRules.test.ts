// deploy/monitoring/nodemend-alerts.yaml on its own: every expression passes the small PromQL check, every
// alert says how bad it is and which runbook section to read (a heading that exists in docs/operations.md),
// and the chart's PrometheusRule (monitoring.prometheusRule.enabled) carries the same groups. Which metric
// names the expressions may use is checked against the running binaries in test/cluster/alertRules.test.ts.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  alertsOf,
  inspectExpr,
  markdownAnchors,
  missingFromExposition,
  parseExposition,
  readAlertsFile,
  recordsOf,
  sourceMetrics
} from "../src/alertRules.ts"
import {
  AWS_REQUIRED_VALUES,
  DEPLOY_DIR,
  find,
  type KubeObject,
  lint,
  loadManifests,
  parseObjects,
  render
} from "../src/index.ts"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

const file = readAlertsFile()
const alerts = alertsOf(file)
const records = recordsOf(file)

describe("nodemend-alerts.yaml", () => {
  it("is a PrometheusRule with one controller and one agent group", () => {
    expect(file.apiVersion).toBe("monitoring.coreos.com/v1")
    expect(file.kind).toBe("PrometheusRule")
    expect(file.spec.groups.map((g) => g.name)).toEqual(["nodemend-controller", "nodemend-agent"])
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length)
  })

  it.each([...records, ...alerts].map((a) => ["alert" in a ? a.alert : a.record, a] as const))(
    "%s: expression passes the syntax check",
    (_, a) => {
      expect(inspectExpr(a.expr).errors).toEqual([])
    }
  )

  it("recording rules: level:metric:operations names, each defined once, before the rules of its group that use it", () => {
    expect(records.length).toBeGreaterThan(0)
    expect(new Set(records.map((r) => r.record)).size).toBe(records.length)
    for (const g of file.spec.groups) {
      const defined = new Set<string>()
      for (const r of g.rules) {
        for (const m of inspectExpr(r.expr).metrics)
          if (m.includes(":")) expect(defined, `${g.name}: ${m} used before it is recorded`).toContain(m)
        if ("record" in r) {
          expect(r.record).toMatch(/^[a-z_]+:nodemend_(controller|agent)_[a-z_]+:[a-z0-9_]+$/)
          expect(Object.keys(r).filter((k) => !["record", "expr", "labels"].includes(k))).toEqual([])
          defined.add(r.record)
        }
      }
    }
  })

  it("every recording rule is read by an alert (the dashboard reads them too: dashboard.test.ts)", () => {
    const used = new Set(alerts.flatMap((a) => inspectExpr(a.expr).metrics))
    for (const r of records) expect(used, r.record).toContain(r.record)
  })

  it("every rule has only the fields of the PrometheusRule CRD's rule schema, with its duration format", () => {
    // monitoring.coreos.com/v1 Rule: alert, expr, for, keep_firing_for, labels, annotations (record is for
    // recording rules); durations match the CRD's pattern; labels and annotations are string maps.
    const duration =
      /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/
    for (const a of alerts) {
      expect(
        Object.keys(a).filter((k) => !["alert", "expr", "for", "labels", "annotations"].includes(k))
      ).toEqual([])
      expect(typeof a.expr, a.alert).toBe("string")
      if (a.for !== undefined) expect(a.for, a.alert).toMatch(duration)
      for (const v of [...Object.values(a.labels ?? {}), ...Object.values(a.annotations ?? {})])
        expect(typeof v, a.alert).toBe("string")
    }
  })

  it("every alert has a severity, a summary and a runbook section that exists", () => {
    const anchors = markdownAnchors(readFileSync(join(REPO_ROOT, "docs", "operations.md"), "utf8"))
    for (const a of alerts) {
      expect(["warning", "critical"], a.alert).toContain(a.labels?.severity)
      expect(a.annotations?.summary, a.alert).toBeTruthy()
      const runbook = a.annotations?.runbook ?? ""
      expect(runbook, a.alert).toMatch(/^docs\/operations\.md#/)
      expect(anchors, `${a.alert}: ${runbook}`).toContain(runbook.split("#")[1])
      if (a.for !== undefined) expect(a.for, a.alert).toMatch(/^\d+[smh]$/)
    }
  })
})

describe("the PromQL check", () => {
  it("finds metric names and matcher labels, not functions, keywords or grouping labels", () => {
    const info = inspectExpr(
      '(sum by (pool) (increase(a_total{outcome="x", b=~"y"}[5m])) > 0) and on () max(c) or vector(0)'
    )
    expect(info.errors).toEqual([])
    expect(info.metrics).toEqual(["a_total", "c"])
    expect(info.matcherLabels).toEqual([
      { metric: "a_total", label: "outcome" },
      { metric: "a_total", label: "b" }
    ])
  })

  it("reads offset and set operators: a series new within the hour", () => {
    const info = inspectExpr("(increase(x_total[1h]) > 0) or (x_total unless x_total offset 1h)")
    expect(info.errors).toEqual([])
    expect(info.metrics).toEqual(["x_total"])
  })

  it("reports unbalanced brackets, unknown functions, bad ranges and unclosed strings", () => {
    expect(inspectExpr("sum(rate(a[5m])").errors).toContain("unclosed (")
    expect(inspectExpr("rates(a[5m])").errors).toContain("unknown function rates")
    expect(inspectExpr("rate(a[5 minutes])").errors.join()).toMatch(/bad range/)
    expect(inspectExpr('a{b="c}').errors.join()).toMatch(/unterminated string/)
    expect(inspectExpr("max by pool (a)").errors.join()).toMatch(/without a label list/)
  })

  it("a recorded name counts as served when what it records is, with that series' labels", () => {
    const served = parseExposition('a_total{outcome="x"} 1\n')
    const record = { record: "outcome:a:increase5m", expr: "sum by (outcome) (increase(a_total[5m]))" }
    const alert = { alert: "A", expr: 'outcome:a:increase5m{outcome="x"} > 0' }
    expect(missingFromExposition([record, alert], served)).toEqual([])
    expect(missingFromExposition([alert], served, [record])).toEqual([])
    expect(
      missingFromExposition([{ ...alert, expr: 'outcome:a:increase5m{result="x"} > 0' }], served, [record])
    ).toEqual(["A: outcome:a:increase5m has no label result"])
    // What it records is not served: neither is the record.
    expect(missingFromExposition([alert], new Map(), [record])).toEqual([
      "A: metric outcome:a:increase5m is not served"
    ])
    expect(sourceMetrics(alert.expr, [record])).toEqual(["a_total"])
  })

  it("a renamed metric or label is reported against an exposition", () => {
    const served = parseExposition(
      '# TYPE a_total counter\na_total{outcome="x"} 1\nc 0\nh_bucket{le="+Inf"} 2\n'
    )
    expect(served.get("h_bucket")).toEqual(new Set(["le"]))
    const rule = { alert: "A", expr: 'increase(a_total{outcome="x"}[5m]) > 0' }
    expect(missingFromExposition([rule], served)).toEqual([])
    expect(
      missingFromExposition([{ ...rule, expr: 'increase(b_total{outcome="x"}[5m]) > 0' }], served)
    ).toEqual(["A: metric b_total is not served"])
    expect(
      missingFromExposition([{ ...rule, expr: 'increase(a_total{result="x"}[5m]) > 0' }], served)
    ).toEqual(["A: a_total has no label result"])
  })
})

describe("the chart's PrometheusRule", () => {
  it("is off by default", () => {
    expect(render({ values: AWS_REQUIRED_VALUES }).filter((o) => o.kind === "PrometheusRule")).toEqual([])
  })

  it("monitoring.prometheusRule.enabled renders the same groups as the file, with the extra labels", () => {
    const objects = render({
      namespace: "monitoring-test",
      values: {
        ...AWS_REQUIRED_VALUES,
        monitoring: { prometheusRule: { enabled: true, labels: { release: "kube-prometheus-stack" } } }
      }
    })
    const rule = find(objects, "PrometheusRule", "nodemend") as unknown as typeof file
    expect(rule.apiVersion).toBe(file.apiVersion)
    expect(rule.metadata.namespace).toBe("monitoring-test")
    expect((rule.metadata as { labels?: Record<string, string> }).labels).toMatchObject({
      release: "kube-prometheus-stack",
      "app.kubernetes.io/part-of": "nodemend"
    })
    expect(rule.spec).toEqual(file.spec)
  })

  it("helm lint --strict passes with it enabled", () => {
    const r = lint({ ...AWS_REQUIRED_VALUES, monitoring: { prometheusRule: { enabled: true } } })
    expect(r.stderr + r.stdout).not.toMatch(/\[ERROR\]|\[WARNING\]/)
    expect(r.status).toBe(0)
  })

  it("the schema refuses an unknown monitoring key", () => {
    expect(() => render({ values: { ...AWS_REQUIRED_VALUES, monitoring: { serviceMonitor: {} } } })).toThrow(
      /monitoring/
    )
  })

  it("a half that is not installed gets no alerts", () => {
    const agentOnly = render({
      values: { controller: { enabled: false }, monitoring: { prometheusRule: { enabled: true } } }
    })
    const rule = find(agentOnly, "PrometheusRule", "nodemend") as unknown as typeof file
    expect(rule.spec.groups.map((g) => g.name)).toEqual(["nodemend-agent"])
  })
})

describe("podmonitors.yaml", () => {
  type PodMonitor = KubeObject & {
    spec: {
      selector: { matchLabels: Record<string, string> }
      podMetricsEndpoints: { port: string; path: string }[]
    }
  }
  type Workload = KubeObject & {
    spec: {
      template: {
        metadata: { labels: Record<string, string> }
        spec: { containers: { ports?: { name?: string }[] }[] }
      }
    }
  }
  const monitors = parseObjects(readFileSync(join(DEPLOY_DIR, "monitoring", "podmonitors.yaml"), "utf8"))

  it.each([
    ["nodemend-agent", "DaemonSet", loadManifests("agent")],
    ["nodemend-controller", "Deployment", loadManifests("controller")]
  ] as const)(
    "%s: selects the %s's pods in its namespace on a port it declares, at /metrics",
    (name, kind, objs) => {
      const monitor = find(monitors, "PodMonitor", name) as PodMonitor
      const workload = find(objs, kind, name) as Workload
      expect(monitor.metadata.namespace).toBe(workload.metadata.namespace)
      expect(workload.spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels)
      const ports = workload.spec.template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name)
      for (const e of monitor.spec.podMetricsEndpoints) {
        expect(ports).toContain(e.port)
        expect(e.path).toBe("/metrics")
      }
    }
  )
})
