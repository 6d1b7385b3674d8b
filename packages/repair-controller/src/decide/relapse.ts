/**
 * Relapse: repairs that do not help stop. When nodes repaired for a reason are followed, within a window, by the
 * same condition and reason on their replacements (or on other nodes of the pool that came up after the repair
 * started, or on the rebooted node itself), repairing more of them will not help: a bad image, a broken launch
 * template, a driver that fails on that instance type. Past `threshold` relapses within `window`, new repairs of
 * that reason in that pool are held (`RepairHeld`), until an operator releases the hold
 * (`kubectl nodemend release <pool> <reason>`) or `quiet` passes without a relapse. Pure: the ledger
 * (domain/RelapseLedger.ts) in, the ledger out; the controller keeps it in the journal.
 */
import { resolveReason } from "@nodemend/reason-codes"
import type { ControllerConfig, RelapseSettings } from "../config/ControllerConfig.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { PolicyMatch } from "./policyMatch.ts"
import type { Hold, LedgerRepair, Relapse, RelapseLedger } from "../domain/RelapseLedger.ts"

export interface RelapsePolicy {
  readonly enabled: boolean
  readonly windowMs: number
  readonly threshold: number
  readonly quietMs: number
}

/** The resolution of the API's timestamps. */
const SECOND = 1000

/** How many repairs and relapses a ledger keeps at most (the newest): evidence, not history. */
export const LEDGER_CAP = 50

const pick = (
  reasons: Readonly<Record<string, Partial<RelapseSettings>>> | undefined,
  reason: string
): Partial<RelapseSettings> | undefined => {
  if (reasons === undefined) return undefined
  const exact = reasons[reason]
  if (exact !== undefined) return exact
  const r = resolveReason(reason)
  return r !== undefined ? reasons[r.entry.code] : undefined
}

/**
 * The settings for a pool and reason: `pools.<p>.relapse.reasons.<r>` > `pools.<p>.relapse` >
 * `relapse.reasons.<r>` > `relapse`; a reason key may be exact or a catalog template.
 */
export const relapsePolicy = (
  config: ControllerConfig,
  pool: string | undefined,
  reason: string
): RelapsePolicy => {
  const g = config.relapse
  const p = pool !== undefined ? config.pools[pool]?.relapse : undefined
  const { reasons: _pr, ...poolLevel } = p ?? {}
  const s: RelapseSettings = {
    enabled: g.enabled,
    windowSeconds: g.windowSeconds,
    threshold: g.threshold,
    quietSeconds: g.quietSeconds,
    ...pick(g.reasons, reason),
    ...poolLevel,
    ...pick(p?.reasons, reason)
  }
  return {
    enabled: s.enabled,
    windowMs: s.windowSeconds * 1000,
    threshold: s.threshold,
    quietMs: s.quietSeconds * 1000
  }
}

export const emptyLedger = (pool: string, reason: string, conditionType: string): RelapseLedger => ({
  v: 1,
  pool,
  reason,
  conditionType,
  repairs: [],
  relapses: []
})

/** A repair that ended well joins the ledger (the newest LEDGER_CAP kept; those past any window dropped). */
export const recordRepair = (
  ledger: RelapseLedger,
  repair: LedgerRepair,
  policy: RelapsePolicy,
  now: number
): RelapseLedger => {
  const repairs = [...ledger.repairs.filter((r) => r.id !== repair.id), repair]
    .filter((r) => r.finishedAt + policy.windowMs >= now)
    .slice(-LEDGER_CAP)
  return { ...ledger, repairs }
}

/** Whether a repair of this reason joins a ledger at all: it has a reason, and its policy keeps ledgers. */
export const keepsLedger = (reason: string, policy: RelapsePolicy): boolean => reason !== "" && policy.enabled

/** What of a repair that ended well the ledger keeps. An escalated repair (a reboot that became a replace) counts as the replace it ended as. */
export interface EndedRepair {
  readonly id: string
  readonly node: string
  readonly action: "Replace" | "Reboot"
  readonly escalated: boolean
  readonly replacementNode?: string | undefined
  readonly replacementInstance?: string | undefined
  readonly startedAt: number
  readonly finishedAt: number
}

export const ledgerRepairOf = (r: EndedRepair): LedgerRepair => ({
  id: r.id,
  node: r.node,
  action: r.escalated ? "Replace" : r.action,
  ...(r.replacementNode !== undefined ? { replacement: r.replacementNode } : {}),
  ...(r.replacementInstance !== undefined ? { replacementInstance: r.replacementInstance } : {}),
  startedAt: r.startedAt,
  finishedAt: r.finishedAt
})

/** What the controller sees of a node matching the ledger's condition and reason. */
export interface Sighting {
  readonly node: string
  readonly uid?: string | undefined
  readonly providerID?: string | undefined
  /** The Node's creationTimestamp. */
  readonly createdAt?: number | undefined
  /** The condition's lastTransitionTime. */
  readonly since: number
}

export const sightingOf = (node: NodeView, since: number): Sighting => ({
  node: node.name,
  uid: node.uid,
  providerID: node.providerID,
  createdAt: node.createdAt,
  since
})

/** Which of the ledger's repairs a sighting follows, and how; undefined when it follows none. */
export const relapseOf = (ledger: RelapseLedger, s: Sighting, policy: RelapsePolicy): Relapse | undefined => {
  // One relapse per node name, whatever its uid: a Node deleted and re-created under its name (its kubelet may do
  // that with its own credentials, and re-registers so) is the same machine, and must not count twice; a
  // replacement is a new machine with a new name.
  if (ledger.relapses.some((r) => r.node === s.node)) return undefined
  // Kubernetes writes lastTransitionTime and creationTimestamp in whole seconds: a replacement that comes up (and
  // fails) within the second its repair started reads as before it.
  const within = (r: LedgerRepair) =>
    s.since >= r.startedAt - SECOND && s.since <= r.finishedAt + policy.windowMs
  const newest = [...ledger.repairs].sort((a, b) => b.finishedAt - a.finishedAt)
  const isReplacement = (r: LedgerRepair) =>
    r.replacement === s.node ||
    (r.replacementInstance !== undefined && s.providerID?.endsWith(`/${r.replacementInstance}`) === true)
  const asReplacement = newest.find((r) => isReplacement(r) && within(r))
  const asSameNode = newest.find(
    (r) => r.action === "Reboot" && r.node === s.node && s.since > r.finishedAt && within(r)
  )
  const asFresh = newest.find(
    (r) => r.node !== s.node && s.createdAt !== undefined && s.createdAt >= r.startedAt - SECOND && within(r)
  )
  const [repair, kind] =
    asReplacement !== undefined
      ? ([asReplacement, "replacement"] as const)
      : asSameNode !== undefined
        ? ([asSameNode, "same-node"] as const)
        : asFresh !== undefined
          ? ([asFresh, "fresh"] as const)
          : [undefined, undefined]
  if (repair === undefined) return undefined
  const from = kind === "same-node" ? repair.finishedAt : (s.createdAt ?? repair.finishedAt)
  return {
    node: s.node,
    ...(s.uid !== undefined ? { uid: s.uid } : {}),
    repairId: repair.id,
    repairedNode: repair.node,
    kind,
    at: s.since,
    afterMs: Math.max(0, s.since - from)
  }
}

/**
 * A node's matches that can be sightings (they have a reason and a transition time), each with the sighting.
 * A match is worth checking only against a ledger that has repairs (`worthObserving`).
 */
export const sightingsOf = (
  node: NodeView,
  matches: ReadonlyArray<PolicyMatch>
): ReadonlyArray<{ readonly match: PolicyMatch; readonly sighting: Sighting }> =>
  matches.flatMap((m) =>
    m.reason === "" || m.lastTransitionTime === undefined
      ? []
      : [{ match: m, sighting: sightingOf(node, m.lastTransitionTime) }]
  )

export const worthObserving = (ledger: RelapseLedger | undefined): ledger is RelapseLedger =>
  ledger !== undefined && ledger.repairs.length > 0

/** Relapses that count now: within the window of the newest. */
export const countingRelapses = (
  ledger: RelapseLedger,
  policy: RelapsePolicy,
  now: number
): ReadonlyArray<Relapse> => ledger.relapses.filter((r) => r.at + policy.windowMs >= now)

export interface Observed {
  readonly ledger: RelapseLedger
  /** The relapse this sighting was, if any. */
  readonly relapse?: Relapse
  /** The hold it engaged, if it did. */
  readonly engaged?: Hold
}

/** A node seen with the ledger's condition and reason: a relapse or not, and whether it engages the hold. */
export const observe = (ledger: RelapseLedger, s: Sighting, policy: RelapsePolicy, now: number): Observed => {
  if (!policy.enabled) return { ledger }
  const relapse = relapseOf(ledger, s, policy)
  if (relapse === undefined) return { ledger }
  return withRelapse(ledger, relapse, policy, now)
}

/**
 * A repair's replacement failed its health gate (actions/replacementGate.ts): a relapse of that repair, kept while
 * the repair is still in flight (the repair itself joins the ledger only if it ends well), once per node name.
 */
export const replacementFailed = (
  ledger: RelapseLedger,
  relapse: Relapse,
  policy: RelapsePolicy,
  now: number
): Observed =>
  !policy.enabled || ledger.relapses.some((r) => r.node === relapse.node)
    ? { ledger }
    : withRelapse(ledger, relapse, policy, now)

/** The ledger with one more relapse, and the hold it engages when it is the one past the threshold. */
const withRelapse = (
  ledger: RelapseLedger,
  relapse: Relapse,
  policy: RelapsePolicy,
  now: number
): Observed => {
  const next = { ...ledger, relapses: [...ledger.relapses, relapse].slice(-LEDGER_CAP) }
  if (next.hold !== undefined) return { ledger: next, relapse }
  const counting = countingRelapses(next, policy, now)
  if (counting.length < policy.threshold) return { ledger: next, relapse }
  const hold: Hold = {
    since: now,
    evidence: counting,
    threshold: policy.threshold,
    windowMs: policy.windowMs
  }
  return { ledger: { ...next, hold }, relapse, engaged: hold }
}

/** When a hold lifts by itself: `quiet` after the last relapse (or after it engaged). */
export const quietUntil = (ledger: RelapseLedger, policy: RelapsePolicy): number | undefined => {
  if (ledger.hold === undefined) return undefined
  const last = Math.max(ledger.hold.since, ...ledger.relapses.map((r) => r.at))
  return last + policy.quietMs
}

export type HoldVerdict =
  | { readonly _tag: "Clear" }
  | {
      readonly _tag: "Held"
      readonly pool: string
      readonly reason: string
      readonly hold: Hold
      /** Every relapse recorded while it holds (the evidence and any since). */
      readonly relapses: ReadonlyArray<Relapse>
      readonly until: number
    }

/** Whether the ledger holds new repairs now. A disabled policy never holds; a quiet period lifts it. */
export const holdVerdict = (
  ledger: RelapseLedger | undefined,
  policy: RelapsePolicy,
  now: number
): HoldVerdict => {
  if (ledger?.hold === undefined || !policy.enabled) return { _tag: "Clear" }
  const until = quietUntil(ledger, policy) ?? now
  if (now >= until) return { _tag: "Clear" }
  return {
    _tag: "Held",
    pool: ledger.pool,
    reason: ledger.reason,
    hold: ledger.hold,
    relapses: ledger.relapses.filter((r) => r.at >= ledger.hold!.since - ledger.hold!.windowMs),
    until
  }
}

/** A held ledger whose quiet period has passed (or whose policy turned off): its hold lifts by itself. */
export const liftsByItself = (ledger: RelapseLedger, policy: RelapsePolicy, now: number): boolean =>
  ledger.hold !== undefined && holdVerdict(ledger, policy, now)._tag === "Clear"

/** The queue's backoff from relapses (decide/order.ts): those counting now in the pool and reason's ledger. */
export const relapseSetbacks = (
  ledger: RelapseLedger | undefined,
  policy: RelapsePolicy,
  now: number
): number => (ledger === undefined ? 0 : countingRelapses(ledger, policy, now).length)

/** A hold lifted (quiet period or operator): the ledger starts over. */
export const released = (ledger: RelapseLedger): RelapseLedger =>
  emptyLedger(ledger.pool, ledger.reason, ledger.conditionType)

const fmtMs = (ms: number): string => {
  const s = Math.round(ms / 1000)
  if (s < 120) return `${s}s`
  const m = Math.round(s / 60)
  return m < 120 ? `${m}m` : `${Math.round(m / 6) / 10}h`
}

/** The evidence, for an Event: which repairs, which nodes relapsed, how fast. */
export const evidenceText = (relapses: ReadonlyArray<Relapse>, limit = 5): string => {
  const shown = relapses.slice(-limit).map((r) => {
    const who =
      r.kind === "replacement"
        ? `replacement ${r.node} of ${r.repairedNode}`
        : r.kind === "same-node"
          ? `${r.node} after its reboot`
          : `fresh node ${r.node} (after the repair of ${r.repairedNode})`
    return `${who} relapsed ${fmtMs(r.afterMs)} after it came up (repair ${r.repairId})`
  })
  return shown.join("; ") + (relapses.length > limit ? `; and ${relapses.length - limit} more` : "")
}

export const holdText = (v: Extract<HoldVerdict, { _tag: "Held" }>): string =>
  `${v.relapses.length} nodes of ${v.pool === "<cluster>" ? "the cluster" : `pool ${v.pool}`} came back with ${v.reason} within ${fmtMs(v.hold.windowMs)} of a repair (threshold ${v.hold.threshold}), so repairing more will not help: ${evidenceText(v.relapses)}`
