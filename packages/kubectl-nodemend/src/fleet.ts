/**
 * The fleet at a glance (`kubectl nodemend status`) and one node's history (`kubectl nodemend timeline`),
 * computed from Nodes, Events and the repair controller's journal. Pure functions over API objects.
 *
 * Repair phase: the controller's journal (repairJournal.ts), never the Node's own annotations.
 * Breaker and stand-down: the controller keeps no status object, so they come from its latest Decide
 * events on the pool's nodes (`RepairBlocked` = breaker open, `RepairStandDown` = zonal-shift stand-down),
 * counted as current while younger than the window. Only the controller's own events count: anyone allowed
 * to create Events (node agents included) can write those reasons, but not its reportingController.
 */
import { type CoreEvent, NODE_EVENT_NAMESPACE, type Node } from "@nodemend/kube-access"
import { CONDITION_TYPES, REPAIR_CONTROLLER_REPORTING_CONTROLLER, ZONE_LABEL } from "@nodemend/reason-codes"
import { type RepairJournal, type RepairSummary, repairOf } from "./repairJournal.ts"

export const DEFAULT_POOL_LABELS = [
  "karpenter.sh/nodepool",
  "eks.amazonaws.com/nodegroup",
  "nodemend.io/pool"
]
/** A Decide event older than this no longer describes the pool's state. */
export const DECISION_WINDOW_MS = 10 * 60 * 1000

/**
 * The repair controller's events: its reportingController (an admission policy lets only its service account
 * write it) in the namespace its EventRecorder writes to. core/v1 shows reportingController as
 * `reportingComponent`; the legacy `source.component`, which the controller never sets, is not taken as proof.
 */
export const REPAIR_CONTROLLER = REPAIR_CONTROLLER_REPORTING_CONTROLLER

export const isControllerEvent = (e: CoreEvent): boolean =>
  e.reportingComponent === REPAIR_CONTROLLER && e.metadata?.namespace === NODE_EVENT_NAMESPACE

export const SHORT_CONDITION: Record<(typeof CONDITION_TYPES)[number], string> = {
  KernelReady: "KERNEL",
  ContainerRuntimeReady: "RUNTIME",
  NetworkingReady: "NETWORKING",
  StorageReady: "STORAGE",
  AcceleratedHardwareReady: "ACCELERATED"
}

export const poolOf = (node: Node, poolLabels: ReadonlyArray<string>): string => {
  for (const l of poolLabels) {
    const v = node.metadata?.labels?.[l]
    if (v) return v
  }
  return "<none>"
}

const conditionCell = (node: Node, type: string): string => {
  const c = node.status?.conditions?.find((x) => x.type === type)
  if (!c) return "-"
  return c.status === "True" ? "True" : `${c.status}:${c.reason ?? ""}`
}

export const isUnhealthy = (node: Node, journal: RepairJournal): boolean =>
  repairOf(node, journal) !== undefined ||
  (node.status?.conditions ?? []).some(
    (c) =>
      ((CONDITION_TYPES as readonly string[]).includes(c.type) && c.status === "False") ||
      (c.type === "Ready" && c.status !== "True")
  )

export const nodeRows = (
  nodes: ReadonlyArray<Node>,
  poolLabels: ReadonlyArray<string>,
  journal: RepairJournal
): string[][] =>
  [...nodes]
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
    .map((n) => {
      const repair = repairOf(n, journal)
      return [
        n.metadata?.name ?? "",
        poolOf(n, poolLabels),
        n.metadata?.labels?.[ZONE_LABEL] ?? "-",
        conditionCell(n, "Ready"),
        ...CONDITION_TYPES.map((t) => conditionCell(n, t)),
        repair ? `${repair.phase}${repair.action ? `/${repair.action}` : ""}` : "-"
      ]
    })

export const NODE_HEADERS = [
  "NODE",
  "POOL",
  "ZONE",
  "READY",
  ...CONDITION_TYPES.map((t) => SHORT_CONDITION[t]),
  "REPAIR"
]

export const eventTimeMs = (e: CoreEvent): number => {
  const t =
    e.series?.lastObservedTime ??
    e.lastTimestamp ??
    e.eventTime ??
    e.firstTimestamp ??
    e.metadata?.creationTimestamp
  if (t === undefined) return 0
  const ms = new Date(t).getTime()
  return Number.isNaN(ms) ? 0 : ms
}

export interface PoolState {
  readonly pool: string
  readonly nodes: number
  readonly unhealthy: number
  readonly repairing: number
  readonly breaker: string
  readonly standDown: string
}

export const poolStates = (
  nodes: ReadonlyArray<Node>,
  events: ReadonlyArray<CoreEvent>,
  journal: RepairJournal,
  poolLabels: ReadonlyArray<string>,
  nowMs: number,
  windowMs = DECISION_WINDOW_MS
): PoolState[] => {
  const byNode = new Map(nodes.map((n) => [n.metadata?.name ?? "", n]))
  const latest = new Map<string, { breaker?: CoreEvent; standDown?: CoreEvent }>()
  for (const e of events) {
    if (e.reason !== "RepairBlocked" && e.reason !== "RepairStandDown") continue
    if (!isControllerEvent(e)) continue
    const node = byNode.get(e.involvedObject?.name ?? "")
    if (!node || nowMs - eventTimeMs(e) > windowMs) continue
    const pool = poolOf(node, poolLabels)
    const cur = latest.get(pool) ?? {}
    const key = e.reason === "RepairBlocked" ? "breaker" : "standDown"
    const prev = cur[key]
    if (!prev || eventTimeMs(prev) < eventTimeMs(e)) latest.set(pool, { ...cur, [key]: e })
  }
  const pools = new Map<string, Node[]>()
  for (const n of nodes) {
    const p = poolOf(n, poolLabels)
    pools.set(p, [...(pools.get(p) ?? []), n])
  }
  return [...pools.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pool, members]) => {
      const l = latest.get(pool)
      return {
        pool,
        nodes: members.length,
        unhealthy: members.filter((n) => isUnhealthy(n, journal)).length,
        repairing: members.filter((n) => repairOf(n, journal) !== undefined).length,
        breaker: l?.breaker ? `OPEN: ${l.breaker.message ?? ""}` : "closed",
        standDown: l?.standDown ? `YES: ${l.standDown.message ?? ""}` : "no"
      }
    })
}

export interface TimelineEntry {
  readonly atMs: number
  readonly kind: "Condition" | "Event" | "Repair"
  readonly text: string
}

export const timeline = (
  node: Node,
  events: ReadonlyArray<CoreEvent>,
  repair: RepairSummary | undefined
): TimelineEntry[] => {
  const out: TimelineEntry[] = []
  for (const c of node.status?.conditions ?? []) {
    if (!c.lastTransitionTime) continue
    out.push({
      atMs: new Date(c.lastTransitionTime).getTime(),
      kind: "Condition",
      text: `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ""}${c.message ? `: ${c.message}` : ""}`
    })
  }
  for (const e of events) {
    const count = e.series?.count ?? e.count
    const claimed = e.reportingComponent || e.source?.component || ""
    // An event that names the controller without being its own is shown as such, never as the controller's.
    const source = claimed === REPAIR_CONTROLLER && !isControllerEvent(e) ? `unverified: ${claimed}` : claimed
    out.push({
      atMs: eventTimeMs(e),
      kind: "Event",
      text: `${e.type ?? "Normal"} ${e.reason ?? ""}${source ? ` (${source})` : ""}: ${e.message ?? ""}${count && count > 1 ? ` (x${count})` : ""}`
    })
  }
  if (repair?.startedAt) {
    out.push({
      atMs: new Date(repair.startedAt).getTime(),
      kind: "Repair",
      text: `repair ${repair.action ?? ""} started for ${repair.reason ?? "?"}; now ${repair.phase}`
    })
  }
  if (repair?.finishedAt) {
    out.push({
      atMs: new Date(repair.finishedAt).getTime(),
      kind: "Repair",
      text: `repair finished: ${repair.phase}${repair.failure ? ` (${repair.failure})` : ""}`
    })
  }
  return out.filter((e) => !Number.isNaN(e.atMs)).sort((a, b) => a.atMs - b.atMs)
}
