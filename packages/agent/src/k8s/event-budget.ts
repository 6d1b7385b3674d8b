/**
 * A token bucket per monitor, so that one noisy monitor cannot spend the Events of the others (NMA
 * pitfall 7: client-go's shared spam filter drops events of every monitor silently). Pure: callers pass `now`.
 */
export interface Bucket {
  readonly tokens: number
  readonly atMs: number
}

export interface Budget {
  readonly burst: number
  readonly refillSeconds: number
}

export const takeToken = (
  bucket: Bucket | undefined,
  nowMs: number,
  budget: Budget
): { readonly ok: boolean; readonly bucket: Bucket } => {
  const start = bucket ?? { tokens: budget.burst, atMs: nowMs }
  const refilled = Math.min(
    budget.burst,
    start.tokens + Math.max(0, nowMs - start.atMs) / (budget.refillSeconds * 1000)
  )
  return refilled >= 1
    ? { ok: true, bucket: { tokens: refilled - 1, atMs: nowMs } }
    : { ok: false, bucket: { tokens: refilled, atMs: nowMs } }
}
