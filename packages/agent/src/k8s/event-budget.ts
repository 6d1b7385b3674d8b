/**
 * Event budgets (issue #8, issue #27). Each monitor has a ceiling, a token bucket (`burst`, one token per
 * `refillSeconds`), so that one noisy monitor cannot spend the Events of the others (NMA pitfall 7:
 * client-go's shared spam filter drops events of every monitor silently). Within it each reason has its own
 * bucket of half the ceiling's burst, so that a storm of one reason leaves room for the repeats of the others,
 * and the first occurrence of a reason not seen for a window is always let through, ceiling or not: a storm of
 * soft lockups must not hide the conntrack table filling up next (issue #27). Those first occurrences are
 * bounded by the number of distinct reasons a monitor has (a finite catalog), once per window each.
 * Pure: callers pass `now`.
 */
export interface Bucket {
  readonly tokens: number
  readonly atMs: number
}

export interface Budget {
  readonly burst: number
  readonly refillSeconds: number
}

const refill = (bucket: Bucket | undefined, nowMs: number, budget: Budget): number => {
  const start = bucket ?? { tokens: budget.burst, atMs: nowMs }
  return Math.min(
    budget.burst,
    start.tokens + Math.max(0, nowMs - start.atMs) / (budget.refillSeconds * 1000)
  )
}

export const takeToken = (
  bucket: Bucket | undefined,
  nowMs: number,
  budget: Budget
): { readonly ok: boolean; readonly bucket: Bucket } => {
  const refilled = refill(bucket, nowMs, budget)
  return refilled >= 1
    ? { ok: true, bucket: { tokens: refilled - 1, atMs: nowMs } }
    : { ok: false, bucket: { tokens: refilled, atMs: nowMs } }
}

/** The bucket of one reason within a monitor's ceiling: half the ceiling's burst (at least 1), same refill. */
export const reasonBudget = (ceiling: Budget): Budget => ({
  burst: Math.max(1, Math.ceil(ceiling.burst / 2)),
  refillSeconds: ceiling.refillSeconds
})

/**
 * `first`: the reason's first occurrence in the window, always let through (it spends a ceiling token when
 * there is one); `repeat`: let through, paid by the reason's bucket and the ceiling; `throttled`: refused.
 */
export type Verdict = "first" | "repeat" | "throttled"

export interface Throttled {
  readonly monitor: string
  readonly reason: string
  readonly count: number
}

interface ReasonState {
  bucket: Bucket
  lastSeenMs: number
}

interface MonitorState {
  ceiling: Bucket | undefined
  readonly reasons: Map<string, ReasonState>
}

/**
 * The budgets of every monitor and reason, and the count of what each refused since the last `drainThrottled`.
 * A reason is new again once it has not been seen (let through or refused) for `windowMs`.
 */
export class EventBudgets {
  readonly #windowMs: number
  readonly #monitors = new Map<string, MonitorState>()
  readonly #throttled = new Map<string, Map<string, number>>()

  constructor(windowMs: number) {
    this.#windowMs = windowMs
  }

  take(monitor: string, reason: string, nowMs: number, ceiling: Budget): Verdict {
    let m = this.#monitors.get(monitor)
    if (m === undefined) {
      m = { ceiling: undefined, reasons: new Map() }
      this.#monitors.set(monitor, m)
    }
    const perReason = reasonBudget(ceiling)
    const r = m.reasons.get(reason)
    if (r === undefined || nowMs - r.lastSeenMs >= this.#windowMs) {
      // Spend a ceiling token when there is one, so first occurrences count against the ceiling; with none
      // left the Event is still created.
      m.ceiling = takeToken(m.ceiling, nowMs, ceiling).bucket
      m.reasons.set(reason, { bucket: takeToken(undefined, nowMs, perReason).bucket, lastSeenMs: nowMs })
      return "first"
    }
    r.lastSeenMs = nowMs
    const own = refill(r.bucket, nowMs, perReason)
    const shared = refill(m.ceiling, nowMs, ceiling)
    if (own >= 1 && shared >= 1) {
      r.bucket = { tokens: own - 1, atMs: nowMs }
      m.ceiling = { tokens: shared - 1, atMs: nowMs }
      return "repeat"
    }
    r.bucket = { tokens: own, atMs: nowMs }
    m.ceiling = { tokens: shared, atMs: nowMs }
    let counts = this.#throttled.get(monitor)
    if (counts === undefined) {
      counts = new Map()
      this.#throttled.set(monitor, counts)
    }
    counts.set(reason, (counts.get(reason) ?? 0) + 1)
    return "throttled"
  }

  /** What was refused since the last call, most first; resets the counts and forgets reasons out of the window. */
  drainThrottled(nowMs: number): readonly Throttled[] {
    const out: Throttled[] = []
    for (const [monitor, counts] of this.#throttled)
      for (const [reason, count] of counts) out.push({ monitor, reason, count })
    this.#throttled.clear()
    for (const m of this.#monitors.values())
      for (const [reason, r] of m.reasons)
        if (nowMs - r.lastSeenMs >= this.#windowMs) m.reasons.delete(reason)
    return out.sort(
      (a, b) => b.count - a.count || a.monitor.localeCompare(b.monitor) || a.reason.localeCompare(b.reason)
    )
  }
}
