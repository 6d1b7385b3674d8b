/**
 * Which queued repair goes first. When a pool's in-flight budget holds due repairs back, the order decides whether
 * a genuine fault waits behind a flood of false positives. Deterministic and prioritized, as Karpenter's RFC for
 * repair's graduation (k/karpenter #3192) plans: priority = rank + age - backoff, in minutes.
 * - rank, per reason: a fatal GPU or kernel fault (a catalog Condition of AcceleratedHardwareReady or KernelReady
 *   that the catalog repairs) is worth RANK_MINUTES x 3, another catalog Condition x 2, a reason outside the catalog
 *   (Ready=Unknown, KubeletNotReady) x 1, a catalog Event promoted to a Condition (a warning that repeated) x 0;
 * - age: minutes since the toleration ran out (measured from the controller's own sight, decide/toleration.ts), at
 *   most MAX_AGE_MINUTES;
 * - backoff: BACKOFF_MINUTES per relapse (within its window) and per failed repair of the pool and reason, at most
 *   MAX_BACKOFF_MINUTES: repairs that keep failing or coming back wait behind the others.
 * Ties: the earlier expiry, then the node name. Pure.
 *
 * What the capped age promises (SPAN = 3 x RANK_MINUTES + MAX_BACKOFF_MINUTES, the widest gap rank and backoff make):
 * - within a rank and backoff the queue is first come, first served (a larger age, and past the cap the earlier
 *   expiry): nothing starves behind its own kind;
 * - across ranks, a repair is ahead of everything that fell due more than SPAN after it, while those have waited
 *   less than MAX_AGE_MINUTES - SPAN: a flood of fresh higher-rank repairs does not starve an old one;
 * - no age outranks severity for ever: a repair that has waited MAX_AGE_MINUTES is behind no repair of a lower rank
 *   and no smaller backoff, however old (or however old a forged time would make it). Under a steady flood of
 *   higher-rank faults that keeps a pool's slots full, a lower-rank repair waits: severity first, by design.
 */
import { resolveReason } from "@nodemend/reason-codes"
import type { PolicyMatch } from "./policyMatch.ts"

export const RANK_MINUTES = 30
export const BACKOFF_MINUTES = 15
export const MAX_BACKOFF_MINUTES = 120
/** The widest gap rank and backoff put between two repairs. */
export const SPAN_MINUTES = 3 * RANK_MINUTES + MAX_BACKOFF_MINUTES
/** Age counts up to twice SPAN (7 h): a window of SPAN in which an old repair stays ahead of later arrivals. */
export const MAX_AGE_MINUTES = 2 * SPAN_MINUTES

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
  /** How long it has waited (uncapped: what the Event says); the score counts at most MAX_AGE_MINUTES of it. */
  readonly ageMinutes: number
  readonly backoffMinutes: number
}

export const priorityOf = (w: Waiting, now: number): Priority => {
  const rankMinutes = RANKS.indexOf(w.rank) * RANK_MINUTES
  const ageMinutes = Math.max(0, now - w.dueSince) / 60_000
  const backoffMinutes = Math.min(MAX_BACKOFF_MINUTES, w.setbacks * BACKOFF_MINUTES)
  return {
    score: rankMinutes + Math.min(ageMinutes, MAX_AGE_MINUTES) - backoffMinutes,
    rankMinutes,
    ageMinutes,
    backoffMinutes
  }
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
  `position ${p.position + 1} of ${p.of} (rank ${w.rank} +${p.priority.rankMinutes}m, waiting ${m1(p.priority.ageMinutes)}m${p.priority.ageMinutes > MAX_AGE_MINUTES ? ` (counts ${MAX_AGE_MINUTES}m)` : ""}, backoff -${p.priority.backoffMinutes}m${w.setbacks > 0 ? ` for ${w.setbacks} relapsed or failed repairs of ${w.reason}` : ""})${p.ahead !== undefined ? `; next ahead: ${p.ahead.node} (${p.ahead.rank})` : ""}`
