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

export const inc = (counter: Metric.Metric<number, unknown>, attributes: Record<string, string>) =>
  Metric.update(Metric.withAttributes(counter, attributes), 1)
