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
import type { PlanView } from "@nodemend/repair-controller"
import { planTimelineText } from "./plannedRepairs.ts"
import { journalEntries, type RepairJournal, type RepairSummary, repairOf } from "./repairJournal.ts"
import { hasInvisible, normalizeName } from "./terminalSafe.ts"

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

/**
 * A Failed repair keeps its journal record and its node's taint and counts against its pool's in-flight budget
 * until an operator acts (`kubectl nodemend retry` or `abandon`): the pool is held by it. One row per Failed
 * record, whether or not its Node still exists (with a node selector: only the selected nodes'); the pool is the
 * one the controller recorded, else the Node's.
 */
export interface HeldPool {
  readonly pool: string
  readonly node: string
  readonly repairId: string
  /** When it failed (the record's finishedAt, else when it started). */
  readonly since: string
  readonly failure: string
  /** The Node the repair started on is still there. */
  readonly nodePresent: boolean
}

export const heldPools = (
  nodes: ReadonlyArray<Node>,
  journal: RepairJournal,
  poolLabels: ReadonlyArray<string>,
  /** Only the listed nodes' records (status -l): else every Failed record, its Node there or not. */
  listedOnly = false
): HeldPool[] => {
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? "", n]))
  return journalEntries(journal)
    .filter((e) => e.summary.phase === "Failed" && (!listedOnly || byName.has(e.node)))
    .map((e) => {
      const live = byName.get(e.node)
      const present = live !== undefined && (e.uid === undefined || live.metadata?.uid === e.uid)
      return {
        pool: e.summary.pool ?? (present && live ? poolOf(live, poolLabels) : "<none>"),
        node: e.node,
        repairId: e.summary.id ?? "?",
        since: e.summary.finishedAt ?? e.summary.startedAt ?? "?",
        failure: e.summary.failure ?? "",
        nodePresent: present
      }
    })
    .sort((a, b) => a.pool.localeCompare(b.pool) || a.node.localeCompare(b.node))
}

export const HELD_POOL_HEADERS = ["POOL", "FAILED NODE", "SINCE", "REPAIR", "FAILURE"]

export const heldPoolRows = (held: ReadonlyArray<HeldPool>): string[][] =>
  held.map((h) => [
    h.pool,
    h.nodePresent ? h.node : `${h.node} (gone)`,
    h.since,
    h.repairId,
    h.failure || "-"
  ])

/**
 * Who wrote an Event, as far as the Event itself can tell. Only the repair controller's identity is checked on
 * write: the admission policy `nodemend-controller-events` (deploy/controller) refuses an Event whose
 * reportingController (core/v1: reportingComponent) or legacy source component is exactly
 * `nodemend.io/repair-controller` unless the controller's service account writes it. Everything else
 * (reportingController, reportingInstance, source.component, source.host) is whatever the writer put there, and
 * any node may write Events about itself. A name that differs from the controller's only by invisible or
 * compatibility characters passes the policy (it compares exact strings), prints like the controller's, and is
 * the forgery to point out.
 */
export interface EventSource {
  /** The writer's claimed component, normalised for display (normalizeName); "" when none is given. */
  readonly component: string
  /** reportingInstance, else source.host, normalised; "" when none is given. */
  readonly instance: string
  /** Written under the controller's identity-checked reportingController, in the namespace it writes to. */
  readonly verified: boolean
  /** For an unverified Event that names (or imitates) the controller, or whose name hides characters: why. */
  readonly warning?: string
}

const isAscii = (s: string) => /^[\x20-\x7e]*$/u.test(s)

/** core/v1 carries reportingInstance too (kube-access's CoreEvent does not declare it). */
type CoreEventWithInstance = CoreEvent & { readonly reportingInstance?: string }

export const eventSource = (e: CoreEventWithInstance): EventSource => {
  const rawComponent = e.reportingComponent || e.source?.component || ""
  const component = normalizeName(rawComponent)
  const instance = normalizeName(e.reportingInstance || e.source?.host || "")
  if (isControllerEvent(e)) return { component, instance, verified: true }
  const imitates = component.toLowerCase() === REPAIR_CONTROLLER
  const hidden = hasInvisible(rawComponent) || rawComponent.normalize("NFKC") !== rawComponent
  const warning = hidden
    ? "hidden or look-alike characters in its name"
    : !isAscii(component)
      ? "non-ASCII characters in its name"
      : !imitates
        ? undefined
        : !e.reportingComponent
          ? "legacy source.component only"
          : e.metadata?.namespace !== NODE_EVENT_NAMESPACE
            ? `written in namespace ${normalizeName(e.metadata?.namespace ?? "")}`
            : "not the controller's exact name"
  return { component, instance, verified: false, ...(warning !== undefined ? { warning } : {}) }
}

/** The FROM cell of an Event: `verified: <component>/<instance>` or `unverified: ...` with the warning. */
export const eventFrom = (s: EventSource): string =>
  `${s.verified ? "verified" : "unverified"}: ${s.component || "(none)"}${s.instance ? `/${s.instance}` : ""}${s.warning ? ` (${s.warning})` : ""}`

/** Printed under a timeline: what the FROM column's words mean. */
export const TIMELINE_LEGEND = [
  `verified: written as ${REPAIR_CONTROLLER}, which the admission policy nodemend-controller-events lets only the`,
  "  repair controller's service account write (installed by deploy/controller and the Helm chart).",
  "unverified: whatever the writer says it is; any node, and anyone allowed to create Events, can write it.",
  "node status: the Node's conditions (its kubelet and agent). controller journal: the repair record and the",
  "  repair planned for an EC2 scheduled event (ConfigMaps of the controller's namespace)."
].join("\n")

export interface TimelineEntry {
  readonly atMs: number
  readonly kind: "Condition" | "Event" | "Repair" | "Plan"
  /** Who wrote it: `node status`, `controller journal`, or an Event's source (eventFrom). */
  readonly from: string
  readonly text: string
}

export const timeline = (
  node: Node,
  events: ReadonlyArray<CoreEvent>,
  repair: RepairSummary | undefined,
  /** The controller's planned repairs (its journal, plannedRepairs.ts): the node's is shown. */
  plans: ReadonlyArray<PlanView> = []
): TimelineEntry[] => {
  const out: TimelineEntry[] = []
  for (const c of node.status?.conditions ?? []) {
    if (!c.lastTransitionTime) continue
    out.push({
      atMs: new Date(c.lastTransitionTime).getTime(),
      kind: "Condition",
      from: "node status",
      text: `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ""}${c.message ? `: ${c.message}` : ""}`
    })
  }
  for (const e of events) {
    const count = e.series?.count ?? e.count
    out.push({
      atMs: eventTimeMs(e),
      kind: "Event",
      from: eventFrom(eventSource(e)),
      text: `${normalizeName(e.type ?? "") || "Normal"} ${normalizeName(e.reason ?? "")}: ${e.message ?? ""}${count && count > 1 ? ` (x${count})` : ""}`
    })
  }
  if (repair?.startedAt) {
    out.push({
      atMs: new Date(repair.startedAt).getTime(),
      kind: "Repair",
      from: "controller journal",
      text: `repair ${repair.action ?? ""} started for ${repair.reason ?? "?"}; now ${repair.phase}`
    })
  }
  if (repair?.finishedAt) {
    out.push({
      atMs: new Date(repair.finishedAt).getTime(),
      kind: "Repair",
      from: "controller journal",
      text: `repair finished: ${repair.phase}${repair.failure ? ` (${repair.failure})` : ""}`
    })
  }
  for (const p of plans)
    if (p.node === node.metadata?.name)
      out.push({ atMs: p.at, kind: "Plan", from: "controller journal", text: planTimelineText(p) })
  return out.filter((e) => !Number.isNaN(e.atMs)).sort((a, b) => a.atMs - b.atMs)
}
