// nodemend's Grafana dashboard, described here and written as deploy/monitoring/nodemend-dashboard.json (and the
// chart's copy) by tools/monitoring/generate.mjs. What the alerts also show is read from the recording rules of
// deploy/monitoring/nodemend-alerts.yaml, so a panel and its alert cannot disagree. Every query is checked by
// packages/deploy-tests: it parses (promtool check rules) and names only metrics the binaries serve.
// docs/operations.md ("Dashboard") says what each panel answers and which alert it supports.

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template
const DS = { type: "prometheus", uid: "${datasource}" }
const POOL = 'pool=~"$pool"'
const NODE = 'node=~"$node"'

/** A query: PromQL and its legend. */
const q = (expr, legendFormat) => ({ expr, legendFormat })

/**
 * The panels in rows; each with the alert it supports (or null), its unit, its queries. `w`/`h` in grid units
 * (24 across).
 */
export const ROWS = [
  {
    title: "Fleet",
    panels: [
      {
        title: "Controller leaders",
        type: "stat",
        w: 6,
        h: 5,
        alert: "NodemendNoLeader",
        description:
          "Replicas that hold the leader lease: 1 is right; 0 for 5 minutes fires NodemendNoLeader.",
        queries: [q("cluster:nodemend_controller_leader:sum", "leaders")]
      },
      {
        title: "Repairs in progress",
        type: "stat",
        w: 6,
        h: 5,
        alert: null,
        description: "Repairs in progress on the leader (all pools).",
        queries: [q("cluster:nodemend_controller_active_repairs:max", "in progress")]
      },
      {
        title: "Stand-down",
        type: "timeseries",
        w: 12,
        h: 5,
        alert: "NodemendStoodDownForZonalShift, NodemendStoodDownProviderUnknown",
        description:
          "1 while repairs stand down: cause shift (an active zonal shift) or unknown (the provider cannot be asked and zonalShift.onUnknown is standDown). 30 minutes fires the alert of that cause.",
        max: 1,
        queries: [q("cause:nodemend_controller_zonal_shift_stand_down:max", "{{cause}}")]
      }
    ]
  },
  {
    title: "Per pool",
    panels: [
      {
        title: "Breaker: unhealthy vs allowed",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendBreakerOpen",
        description:
          "Unhealthy or repairing nodes of each pool against what maxUnhealthyPercent allows; above it the breaker is open (1) and the pool's repairs are blocked. Open for 15 minutes fires NodemendBreakerOpen.",
        queries: [
          q(`max by (pool) (nodemend_controller_pool_unhealthy_nodes{${POOL}})`, "{{pool}} unhealthy"),
          q(`max by (pool) (nodemend_controller_pool_unhealthy_allowed{${POOL}})`, "{{pool}} allowed"),
          q(`pool:nodemend_controller_breaker_open:max{${POOL}}`, "{{pool}} breaker open")
        ]
      },
      {
        title: "Repairs in flight vs budget",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: null,
        description:
          "Repairs in flight in each pool (failed ones holding their slot included) against the in-flight budget (maxInFlight, or the Karpenter NodePool's disruption budget). At the budget, further due repairs are queued.",
        queries: [
          q(`max by (pool) (nodemend_controller_pool_repairs_in_flight{${POOL}})`, "{{pool}} in flight"),
          q(`max by (pool) (nodemend_controller_pool_in_flight_budget{${POOL}})`, "{{pool}} budget")
        ]
      },
      {
        title: "Queued and held repairs",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendPoolHeldByFailedRepair",
        description:
          "Queued: decisions to hold a due repair back for the pool's budget (per interval; a waiting node counts at each requeue). Held: failed repairs keeping an in-flight slot until kubectl nodemend retry or abandon (15 minutes fires NodemendPoolHeldByFailedRepair). Waiting for a drain slot: tainted repairs beyond drain.maxConcurrent.",
        queries: [
          q(
            `sum by (pool) (increase(nodemend_controller_repairs_queued_total{${POOL}}[$__rate_interval]))`,
            "{{pool}} queued"
          ),
          q(`pool:nodemend_controller_pool_failed_repairs:max{${POOL}}`, "{{pool}} held by a failed repair"),
          q("max(nodemend_controller_drains_waiting)", "waiting for a drain slot (all pools)")
        ]
      },
      {
        title: "Relapse holds and zone stand-downs",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendRepairsHeldForRelapse, NodemendZoneStoodDown, NodemendScheduledEventUnhandled",
        description:
          "Pool and reason pairs whose new repairs are held because the nodes repaired for that reason came back with it (kubectl nodemend status lists them; kubectl nodemend release POOL REASON lifts one); above 0 fires NodemendRepairsHeldForRelapse. Per zone, 1 while the failure-domain breaker stands its repairs down (its unhealthy share is over zoneBreaker.maxUnhealthyPercent while the other zones' is not); 15 minutes fires NodemendZoneStoodDown. Repairs planned for EC2 scheduled events, and those overdue and held by a gate; overdue for 10 minutes fires NodemendScheduledEventUnhandled.",
        queries: [
          q("max(nodemend_controller_relapse_holds)", "pool and reason pairs held for relapse"),
          q("max by (zone) (nodemend_controller_zone_stand_down)", "{{zone}} stood down"),
          q("max(nodemend_controller_planned_repairs)", "repairs planned for scheduled events"),
          q("max(nodemend_controller_scheduled_events_unhandled)", "planned repairs overdue")
        ]
      },
      {
        title: "Failed repairs in the last hour, by cause",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendRepairsFailing",
        description:
          "Repairs that ended Failed in the last hour, by the condition, reason and action that started them. Above 0 fires NodemendRepairsFailing; the RepairFailed event and kubectl nodemend timeline NODE say why.",
        queries: [
          q(
            "condition_reason_action:nodemend_controller_repairs_failed:increase1h",
            "{{condition}} {{reason}} {{action}}"
          )
        ]
      },
      {
        title: "Repair phase durations (p50, p90, last hour)",
        type: "timeseries",
        w: 12,
        h: 8,
        unit: "s",
        alert: null,
        description:
          "Toleration expiry -> taint (decision latency), then the time spent in each phase: Draining, Replacing (until the replacement is Ready), Terminating (until the instance is gone). Quantiles over the repairs that left the phase in the last hour.",
        queries: [
          q(
            "histogram_quantile(0.5, sum by (le) (rate(nodemend_controller_decision_latency_seconds_bucket[1h])))",
            "toleration -> taint p50"
          ),
          q(
            "histogram_quantile(0.9, sum by (le) (rate(nodemend_controller_decision_latency_seconds_bucket[1h])))",
            "toleration -> taint p90"
          ),
          q(
            "histogram_quantile(0.5, sum by (phase, le) (rate(nodemend_controller_repair_phase_seconds_bucket[1h])))",
            "{{phase}} p50"
          ),
          q(
            "histogram_quantile(0.9, sum by (phase, le) (rate(nodemend_controller_repair_phase_seconds_bucket[1h])))",
            "{{phase}} p90"
          )
        ]
      },
      {
        title: "Repair duration (p90, last hour) and drain evictions",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendDrainBlockedPastDeadline",
        description:
          "Start to end of repairs by action and outcome (p90, seconds), and eviction attempts per 5 minutes by outcome: pdb-blocked without a break for 15 minutes while a repair runs fires NodemendDrainBlockedPastDeadline.",
        queries: [
          q(
            "histogram_quantile(0.9, sum by (action, outcome, le) (rate(nodemend_controller_repair_duration_seconds_bucket[1h])))",
            "{{action}} {{outcome}} p90 (s)"
          ),
          q("outcome:nodemend_controller_evictions:increase5m", "evictions {{outcome}} /5m")
        ]
      }
    ]
  },
  {
    title: "Per node (agents)",
    panels: [
      {
        title: "Agent conditions False",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: null,
        description:
          "1 while a condition the agent owns is False on the node (the fault the controller acts on after its toleration).",
        max: 1,
        queries: [q(`max by (node, type) (nodemend_agent_condition_false{${NODE}})`, "{{node}} {{type}}")]
      },
      {
        title: "Condition writes (15 minutes)",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendAgentNotReady",
        description:
          "Node status patches per agent in the last 15 minutes, by outcome. Only failed ones for 10 minutes fires NodemendAgentNotReady: the node's conditions are stale.",
        queries: [q(`node:nodemend_agent_condition_writes:increase15m{${NODE}}`, "{{node}} {{outcome}}")]
      },
      {
        title: "Events and event throttling",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: null,
        description:
          "Events per interval by outcome: created, aggregated into a series, throttled (refused by the per-monitor budget; the node's EventsThrottled event names the reasons), failed.",
        queries: [
          q(
            `sum by (node, outcome) (increase(nodemend_agent_events_total{${NODE}}[$__rate_interval]))`,
            "{{node}} {{outcome}}"
          )
        ]
      },
      {
        title: "Findings by reason, dropped findings, kernel log gaps",
        type: "timeseries",
        w: 12,
        h: 8,
        alert: "NodemendAgentDroppingFindings, NodemendAgentKmsgSequenceGaps, NodemendDCGMError",
        description:
          "Findings per interval by reason (DCGMError: NodemendDCGMError); findings dropped for a full queue and kernel log records lost, per 10 minutes (above 0 fires NodemendAgentDroppingFindings, NodemendAgentKmsgSequenceGaps).",
        queries: [
          q(
            `sum by (node, reason) (increase(nodemend_agent_findings_total{${NODE}}[$__rate_interval]))`,
            "{{node}} {{reason}}"
          ),
          q(`node:nodemend_agent_log_findings_dropped:increase10m{${NODE}}`, "{{node}} dropped /10m"),
          q(`node:nodemend_agent_kmsg_sequence_gaps:increase10m{${NODE}}`, "{{node}} kmsg gaps /10m")
        ]
      }
    ]
  }
]

/** The template variables: the data source, and pools and nodes from the metrics that carry them. */
export const VARIABLES = [
  { name: "pool", label: "Pool", metric: "nodemend_controller_pool_nodes", labelName: "pool" },
  { name: "node", label: "Node", metric: "nodemend_agent_condition_writes_total", labelName: "node" }
]

const panelJson = (p, id, gridPos) => ({
  id,
  type: p.type,
  title: p.title,
  description: p.alert ? `${p.description} Alert: ${p.alert}.` : p.description,
  datasource: DS,
  gridPos,
  fieldConfig: {
    defaults: {
      unit: p.unit ?? "short",
      ...(p.max !== undefined ? { min: 0, max: p.max } : {}),
      ...(p.type === "timeseries" ? { custom: { lineWidth: 1, fillOpacity: 0, showPoints: "never" } } : {})
    },
    overrides: []
  },
  options:
    p.type === "stat"
      ? { reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false }, colorMode: "value" }
      : {
          legend: { displayMode: "list", placement: "bottom", showLegend: true },
          tooltip: { mode: "multi", sort: "desc" }
        },
  targets: p.queries.map((t, i) => ({
    refId: String.fromCharCode(65 + i),
    datasource: DS,
    expr: t.expr,
    legendFormat: t.legendFormat,
    range: true
  }))
})

/** The dashboard JSON (Grafana 10+, schemaVersion 39). */
export function dashboard() {
  const panels = []
  let id = 1
  let y = 0
  for (const row of ROWS) {
    panels.push({
      id: id++,
      type: "row",
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y }
    })
    y += 1
    let x = 0
    let rowHeight = 0
    for (const p of row.panels) {
      if (x + p.w > 24) {
        y += rowHeight
        x = 0
        rowHeight = 0
      }
      panels.push(panelJson(p, id++, { h: p.h, w: p.w, x, y }))
      x += p.w
      rowHeight = Math.max(rowHeight, p.h)
    }
    y += rowHeight
  }
  return {
    uid: "nodemend",
    title: "nodemend",
    description:
      "Self-healing nodes: the repair controller's breaker, budgets, queue, phases and failures per pool; the agents' conditions and events per node. docs/operations.md#dashboard",
    tags: ["nodemend"],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: "1m",
    time: { from: "now-6h", to: "now" },
    timepicker: {},
    annotations: { list: [] },
    links: [],
    templating: {
      list: [
        {
          name: "datasource",
          label: "Data source",
          type: "datasource",
          query: "prometheus",
          current: {},
          hide: 0,
          refresh: 1,
          regex: "",
          options: []
        },
        ...VARIABLES.map((v) => ({
          name: v.name,
          label: v.label,
          type: "query",
          datasource: DS,
          query: { qryType: 1, query: `label_values(${v.metric}, ${v.labelName})`, refId: v.name },
          definition: `label_values(${v.metric}, ${v.labelName})`,
          includeAll: true,
          multi: true,
          allValue: ".*",
          current: {},
          hide: 0,
          refresh: 2,
          regex: "",
          sort: 1,
          options: []
        }))
      ]
    },
    panels
  }
}
