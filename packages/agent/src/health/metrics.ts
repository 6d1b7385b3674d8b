/**
 * The agent's Prometheus metrics (served on /metrics through effect/observability's exposition).
 */
import { Metric } from "effect"

export const findingsTotal = Metric.counter("nodemend_agent_findings_total", {
  description: "Findings after config overrides, by monitor, reason and kind (Condition, Event, Resolution)",
  incremental: true
})
export const conditionWritesTotal = Metric.counter("nodemend_agent_condition_writes_total", {
  description: "Node status patches, by outcome",
  incremental: true
})
export const conditionStatus = Metric.gauge("nodemend_agent_condition_false", {
  description: "1 while a condition type the agent owns is False"
})
export const eventsTotal = Metric.counter("nodemend_agent_events_total", {
  description: "Events by monitor and outcome (created, aggregated, throttled, failed)",
  incremental: true
})
export const eventsThrottledTotal = Metric.counter("nodemend_agent_events_throttled_total", {
  description:
    "Occurrences the Event budgets refused, by monitor and reason (each also counts as outcome=throttled)",
  incremental: true
})
export const checkRunsTotal = Metric.counter("nodemend_agent_check_runs_total", {
  description: "Periodic check runs by check and outcome",
  incremental: true
})
export const checkDurationMs = Metric.histogram("nodemend_agent_check_duration_ms", {
  description: "Periodic check duration in milliseconds",
  boundaries: [1, 2, 5, 10, 25, 50, 100, 250, 1000, 5000]
})

const withAttributes = new WeakMap<
  Metric.Metric<number, unknown>,
  Map<string, Metric.Metric<number, unknown>>
>()

/**
 * Adds 1 to the counter's series. The series' metric is made once per attribute set and kept (the sets are
 * few: monitors, reasons, outcomes), not made anew for every finding of a storm.
 */
export const inc = (counter: Metric.Metric<number, unknown>, attributes: Record<string, string>) => {
  let byKey = withAttributes.get(counter)
  if (byKey === undefined) {
    byKey = new Map()
    withAttributes.set(counter, byKey)
  }
  let key = ""
  for (const k in attributes) key += `${k}\u0000${attributes[k]}\u0001`
  let m = byKey.get(key)
  if (m === undefined) {
    m = Metric.withAttributes(counter, attributes)
    byKey.set(key, m)
  }
  return Metric.update(m, 1)
}
