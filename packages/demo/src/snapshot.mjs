/**
 * What the view shows, read from where the truth is: Nodes (conditions, taints, the veto annotation), the
 * controller's repair journal (ConfigMaps in its namespace), its Events, its /metrics (breaker and stand-down
 * per pool) and the fake cloud's zonal shifts. Read-only.
 */
import {
  DO_NOT_REPAIR_ANNOTATION,
  REPAIR_CONTROLLER_REPORTING_CONTROLLER,
  REPAIR_JOURNAL_LABEL,
  REPAIR_TAINT_KEY,
  ZONE_LABEL
} from "@nodemend/reason-codes/keys"
import { POOL_LABEL } from "./fleet.mjs"

/** `name{label="v",...} value` lines of a Prometheus text exposition, for the metrics named. */
export const parseMetrics = (text) => {
  const out = []
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line)
    if (!m) continue
    const labels = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]])
    )
    out.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return out
}

/** client-node hands times over as Date objects or strings; either way kept to the millisecond. */
const eventTime = (e) =>
  new Date(
    e.eventTime ?? e.series?.lastObservedTime ?? e.lastTimestamp ?? e.metadata?.creationTimestamp ?? 0
  ).getTime()

export const takeSnapshot = async (fleet) => {
  const [nodes, journal, events, metricsText, shifts] = await Promise.all([
    fleet.core.listNode({ labelSelector: fleet.selector }).then((l) => l.items),
    fleet.core
      .listNamespacedConfigMap({ namespace: fleet.namespace, labelSelector: `${REPAIR_JOURNAL_LABEL}=true` })
      .then((l) => l.items)
      .catch(() => []),
    // Events about cluster-scoped Nodes live in `default`.
    fleet.core
      .listNamespacedEvent({ namespace: "default" })
      .then((l) => l.items)
      .catch(() => []),
    fetch(fleet.metricsUrl)
      .then((r) => r.text())
      .catch(() => ""),
    fetch(`${fleet.cloudUrl}/admin/zonal-shifts`)
      .then((r) => r.json())
      .then((b) => b.zonalShifts ?? [])
      .catch(() => [])
  ])
  // Other users of a shared cluster write Events too: keep those about this fleet's nodes, past and present.
  for (const n of nodes) fleet.seen.add(n.metadata.name)
  const repairs = {}
  for (const cm of journal) {
    try {
      const r = JSON.parse(cm.data?.record ?? "")
      const node = r.node?.name ?? cm.metadata.name.replace(/^nodemend-repair-/, "")
      repairs[node] = r
    } catch {}
  }
  return {
    at: Date.now(),
    nodes: nodes.map((n) => ({
      name: n.metadata.name,
      pool: n.metadata.labels?.[POOL_LABEL] ?? "",
      zone: n.metadata.labels?.[ZONE_LABEL] ?? "",
      ready: n.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "Unknown",
      conditions: n.status?.conditions ?? [],
      tainted: (n.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY),
      vetoed: n.metadata.annotations?.[DO_NOT_REPAIR_ANNOTATION] === "true",
      deleting: n.metadata.deletionTimestamp !== undefined
    })),
    repairs,
    events: events
      .filter((e) => fleet.seen.has(e.involvedObject?.name ?? ""))
      .filter(
        (e) =>
          e.reportingComponent === REPAIR_CONTROLLER_REPORTING_CONTROLLER ||
          e.source?.component === REPAIR_CONTROLLER_REPORTING_CONTROLLER
      )
      .map((e) => ({
        uid: e.metadata?.uid ?? "",
        at: eventTime(e),
        node: e.involvedObject?.name ?? e.regarding?.name ?? "",
        reason: e.reason ?? "",
        message: e.message ?? e.note ?? "",
        count: e.count ?? e.series?.count ?? 1
      }))
      .sort((a, b) => a.at - b.at),
    metrics: parseMetrics(metricsText),
    /** Each pool's breaker limit and in-flight budget as the controller's config sets them. */
    poolSettings: Object.fromEntries(fleet.pools.map((p) => [p.name, p.settings])),
    shifts: shifts.filter((s) => s.status === "ACTIVE")
  }
}
