/** The controller's Prometheus metrics (served at /metrics with the `nodemend_controller` prefix). */
import { Metric } from "effect"

export const repairsStarted = Metric.counter("repairs_started_total", {
  description: "Repairs started, by condition type, reason and action",
  incremental: true
})
export const repairsRefused = Metric.counter("repairs_refused_total", {
  description:
    "Repairs refused before the node was touched, by cause (unknown-owner, identity, cloud): fail closed",
  incremental: true
})
export const repairsQueued = Metric.counter("repairs_queued_total", {
  description: "Due repairs held back because their pool's in-flight budget was spent",
  incremental: true
})
export const capacityFallbacks = Metric.counter("repair_capacity_fallbacks_total", {
  description:
    "Capacity-first repairs whose replacement could not be had, by what followed (removeFirst, fail)",
  incremental: true
})
export const replacementsUnhealthy = Metric.counter("replacements_unhealthy_total", {
  description:
    "Replacements that failed the health gate and were not counted as capacity, by the check that failed (AgentCondition, GpuCapacity, GpuAllocatable, DcgmDiagnostic, Timeout)",
  incremental: true
})
export const repairsCompleted = Metric.counter("repairs_completed_total", {
  description: "Repairs completed (replacement Ready, or node healthy after reboot)",
  incremental: true
})
export const repairsFailed = Metric.counter("repairs_failed_total", {
  description: "Repairs that failed",
  incremental: true
})
export const repairsEscalated = Metric.counter("repairs_escalated_total", {
  description: "Reboots escalated to Replace",
  incremental: true
})
export const wouldRepair = Metric.counter("would_repair_total", {
  description: "Dry-run repairs",
  incremental: true
})
export const breakerOpen = Metric.gauge("breaker_open", {
  description: "1 while the pool's breaker blocks repairs"
})
export const poolUnhealthy = Metric.gauge("pool_unhealthy_nodes", { description: "Unhealthy nodes per pool" })
export const poolUnhealthyAllowed = Metric.gauge("pool_unhealthy_allowed", {
  description: "Unhealthy nodes the pool's breaker allows (maxUnhealthyPercent of its size, rounded up)"
})
export const poolRepairsInFlight = Metric.gauge("pool_repairs_in_flight", {
  description: "Repairs in flight per pool, failed ones holding their slot included"
})
export const poolInFlightBudget = Metric.gauge("pool_in_flight_budget", {
  description:
    "Repairs the pool may have in flight (maxInFlight, or its Karpenter NodePool's disruption budget)"
})
export const poolSize = Metric.gauge("pool_nodes", { description: "Nodes per pool" })
export const poolFailedRepairs = Metric.gauge("pool_failed_repairs", {
  description:
    "Failed repairs per pool: each holds an in-flight slot until an operator runs kubectl nodemend retry|abandon"
})
export const standDown = Metric.gauge("zonal_shift_stand_down", {
  description:
    "1 while repairs stand down for a zonal shift (cause=shift) or an unanswered query (cause=unknown)"
})
export const relapses = Metric.counter("relapses_total", {
  description:
    "Nodes that came up with the condition and reason a repair in their pool had just fixed (a replacement, a fresh node, a rebooted node), by pool and reason",
  incremental: true
})
export const relapseHold = Metric.gauge("relapse_hold", {
  description: "1 while new repairs of the reason in the pool are held because repairs of it relapse"
})
export const relapseHolds = Metric.gauge("relapse_holds", {
  description:
    "Pool and reason pairs whose repairs are held for relapse now (kubectl nodemend status lists them)"
})
export const repairsHeld = Metric.counter("repairs_held_total", {
  description: "Due repairs not started because their pool and reason are held for relapse",
  incremental: true
})
export const zoneStandDown = Metric.gauge("zone_stand_down", {
  description:
    "1 while repairs in the zone stand down: its unhealthy share crossed zoneBreaker.maxUnhealthyPercent and the other zones' did not"
})
export const zonesStoodDown = Metric.gauge("zones_stood_down", {
  description: "Zones whose repairs stand down now for the failure-domain breaker"
})
export const zonalShiftQueryFailures = Metric.counter("zonal_shift_query_failures_total", {
  description: "activeZonalShifts calls that failed",
  incremental: true
})
export const eventsDropped = Metric.counter("events_dropped_total", {
  description: "Events not written because the backlog was full (a burst of repairs), by reason",
  incremental: true
})
export const drainsInFlight = Metric.gauge("drains_in_flight", {
  description: "Repairs draining now (bounded by drain.maxConcurrent)"
})
export const drainsWaiting = Metric.gauge("drains_waiting", {
  description: "Tainted repairs waiting for a drain slot, in order of expiry"
})
export const evictions = Metric.counter("evictions_total", {
  description: "Eviction outcomes: evicted, pdb-blocked, gone, error, force-deleted",
  incremental: true
})
export const terminations = Metric.counter("instance_terminations_total", {
  description: "terminate calls made to the cloud provider",
  incremental: true
})
export const repairPhaseSeconds = Metric.histogram("repair_phase_seconds", {
  description:
    "Time a repair spent in a phase (Tainting, Draining, Replacing, Terminating, ...), observed as it leaves it",
  boundaries: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600]
})
export const repairDuration = Metric.histogram("repair_duration_seconds", {
  description: "Repair start (record written) to its end, by action and outcome (Succeeded, Failed)",
  boundaries: [30, 60, 120, 300, 600, 1200, 1800, 3600, 7200]
})
export const decisionLatency = Metric.histogram("decision_latency_seconds", {
  description: "Toleration expiry to repair taint",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60]
})
export const ownerProofs = Metric.counter("owner_proofs_total", {
  description:
    "Owner proofs at a repair's decision, by where the cloud's answer came from: ahead (asked shortly before the expiry) or decision (asked then)",
  incremental: true
})
const API_REQUESTS = {
  description: "Kubernetes API requests made by the controller",
  incremental: true
} as const
export const apiRequests = Metric.counter("api_requests_total", API_REQUESTS)
/**
 * `apiRequests` of one verb and operation, the attributes fixed at construction (the same series as
 * `withAttributes`): Effect keys it once, where a `withAttributes` metric is keyed again at every update.
 */
export const apiRequestsOf = (verb: string, operation: string) =>
  Metric.counter("api_requests_total", { ...API_REQUESTS, attributes: { verb, operation } })
export const initialNodeListFailures = Metric.counter("initial_node_list_failures_total", {
  description:
    "Failed first Node lists at start, by HTTP status (none: no answer); the controller retries and stays unready",
  incremental: true
})
export const isLeader = Metric.gauge("leader", { description: "1 while this replica holds the lease" })
export const leaseRenewalSeconds = Metric.histogram("lease_renewal_seconds", {
  description: "Round trip of each successful Lease renewal, on the lease keeper's own thread",
  boundaries: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10]
})
export const eventLoopDelay = Metric.gauge("event_loop_delay_seconds", {
  description:
    "The controller thread's event loop delay over the last 15 s, by quantile (p50, p99, max): how long its own work kept a ready callback waiting"
})
export const activeRepairs = Metric.gauge("active_repairs", { description: "Repairs in progress" })
export const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Process RSS" })
export const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use" })
