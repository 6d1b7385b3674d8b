/** Metrics of the planned repairs for the cloud's scheduled events (controller/ScheduledEventWatch.ts). */
import { Metric } from "effect"

export const scheduledEvents = Metric.gauge("scheduled_events", {
  description:
    "Live (not completed, cancelled or past) scheduled events of the fleet's machines, by event code"
})
export const plannedRepairs = Metric.gauge("planned_repairs", {
  description: "Nodes with a repair planned for a scheduled event of their machine, not started yet"
})
export const scheduledEventsUnhandled = Metric.gauge("scheduled_events_unhandled", {
  description:
    "Planned repairs past their due time and not started (held by a gate or budget): the event may pass its NotBefore unhandled"
})
export const scheduledEventQueryFailures = Metric.counter("scheduled_event_query_failures_total", {
  description: "Scheduled-event queries the cloud did not answer (the last answer is kept)",
  incremental: true
})
