/**
 * Tracks monotonically increasing counters across ticks and decides when an increase is abnormal: the
 * increase is paid from a token bucket (`burst` tokens, refilling `perSecond`); an increase the bucket
 * cannot pay is reported. The first sample of a counter only records it, so a long-lived node's historic
 * totals never fire right after agent start (NMA pitfalls 4 and 5), and a counter that goes backwards
 * (driver reload, reset) restarts from its new value. One tracker lives for the whole agent process.
 */
export interface CounterBudget {
  readonly burst: number
  readonly perSecond: number
}

export interface CounterJump {
  readonly key: string
  readonly from: number
  readonly to: number
}

interface Entry {
  value: number
  tokens: number
  atMs: number
}

export const makeCounterTracker = () => {
  const entries = new Map<string, Entry>()
  return {
    /** Records a sample; returns the jump when the increase exceeds what the budget allows. */
    observe: (key: string, value: number, nowMs: number, budget: CounterBudget): CounterJump | undefined => {
      const e = entries.get(key)
      if (e === undefined || value < e.value) {
        entries.set(key, { value, tokens: budget.burst, atMs: nowMs })
        return undefined
      }
      const tokens = Math.min(
        budget.burst,
        e.tokens + (Math.max(0, nowMs - e.atMs) / 1000) * budget.perSecond
      )
      const delta = value - e.value
      const from = e.value
      e.value = value
      e.atMs = nowMs
      if (delta <= tokens) {
        e.tokens = tokens - delta
        return undefined
      }
      e.tokens = 0
      return { key, from, to: value }
    },
    size: () => entries.size
  }
}
