/**
 * Which queued repair goes first. When a pool's in-flight budget holds due repairs back, the order decides whether
 * a genuine fault waits behind a flood of false positives. Deterministic, prioritized and starvation-free, as
 * Karpenter's RFC for repair's graduation (k/karpenter #3192) plans: priority = rank + age - backoff, in minutes.
 * - rank, per reason: a fatal GPU or kernel fault (a catalog Condition of AcceleratedHardwareReady or KernelReady
 *   that the catalog repairs) is worth RANK_MINUTES x 3, another catalog Condition x 2, a reason outside the catalog
 *   (Ready=Unknown, KubeletNotReady) x 1, a catalog Event promoted to a Condition (a warning that repeated) x 0;
 * - age: minutes since the toleration ran out, without bound, so nothing starves: a repair that waited
 *   3 x RANK_MINUTES + MAX_BACKOFF_MINUTES is ahead of anything that arrives after it;
 * - backoff: BACKOFF_MINUTES per relapse (within its window) and per failed repair of the pool and reason, at most
 *   MAX_BACKOFF_MINUTES: repairs that keep failing or coming back wait behind the others.
 * Ties: the earlier expiry, then the node name. Pure.
 */
import { resolveReason } from "@nodemend/reason-codes"
import type { PolicyMatch } from "./policyMatch.ts"

export const RANK_MINUTES = 30
export const BACKOFF_MINUTES = 15
export const MAX_BACKOFF_MINUTES = 120

export const RANKS = ["promoted", "unknown", "fault", "fatal"] as const
export type Rank = (typeof RANKS)[number]

const FATAL_TYPES = new Set(["AcceleratedHardwareReady", "KernelReady"])

export const rankOf = (m: Pick<PolicyMatch, "conditionType" | "reason">): Rank => {
  const r = m.reason ? resolveReason(m.reason) : undefined
  if (r === undefined || r.entry.conditionType !== m.conditionType) return "unknown"
  if (r.entry.severity === "Event") return "promoted"
  return FATAL_TYPES.has(r.entry.conditionType) && r.defaultAction !== "None" ? "fatal" : "fault"
}

/** A due repair waiting for (or about to take) a slot of its pool. */
export interface Waiting {
  readonly node: string
  readonly reason: string
  readonly rank: Rank
  /** When its toleration ran out (epoch ms). */
  readonly dueSince: number
  /** Relapses plus failed repairs of its pool and reason. */
  readonly setbacks: number
}

export interface Priority {
  readonly score: number
  readonly rankMinutes: number
  readonly ageMinutes: number
  readonly backoffMinutes: number
}

export const priorityOf = (w: Waiting, now: number): Priority => {
  const rankMinutes = RANKS.indexOf(w.rank) * RANK_MINUTES
  const ageMinutes = Math.max(0, now - w.dueSince) / 60_000
  const backoffMinutes = Math.min(MAX_BACKOFF_MINUTES, w.setbacks * BACKOFF_MINUTES)
  return { score: rankMinutes + ageMinutes - backoffMinutes, rankMinutes, ageMinutes, backoffMinutes }
}

/** The waiting repairs, first to go first. */
export const ordered = (waiting: ReadonlyArray<Waiting>, now: number): ReadonlyArray<Waiting> =>
  [...waiting]
    .map((w) => ({ w, p: priorityOf(w, now).score }))
    .sort(
      (a, b) =>
        b.p - a.p || a.w.dueSince - b.w.dueSince || (a.w.node < b.w.node ? -1 : a.w.node > b.w.node ? 1 : 0)
    )
    .map((x) => x.w)

export interface Place {
  /** 0-based: how many waiting repairs of the pool go before it. */
  readonly position: number
  readonly of: number
  readonly priority: Priority
  /** The one just ahead of it, if any, for the Event. */
  readonly ahead?: Waiting
}

/** Where `me` stands among `others` (the pool's other waiting repairs; `me` among them is ignored). */
export const placeOf = (me: Waiting, others: ReadonlyArray<Waiting>, now: number): Place => {
  const all = ordered([...others.filter((w) => w.node !== me.node), me], now)
  const position = all.findIndex((w) => w.node === me.node)
  const ahead = position > 0 ? all[position - 1] : undefined
  return {
    position,
    of: all.length,
    priority: priorityOf(me, now),
    ...(ahead !== undefined ? { ahead } : {})
  }
}

const m1 = (x: number) => Math.round(x * 10) / 10

export const placeText = (w: Waiting, p: Place): string =>
  `position ${p.position + 1} of ${p.of} (rank ${w.rank} +${p.priority.rankMinutes}m, waiting ${m1(p.priority.ageMinutes)}m, backoff -${p.priority.backoffMinutes}m${w.setbacks > 0 ? ` for ${w.setbacks} relapsed or failed repairs of ${w.reason}` : ""})${p.ahead !== undefined ? `; next ahead: ${p.ahead.node} (${p.ahead.rank})` : ""}`
