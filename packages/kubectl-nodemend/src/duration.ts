/** Parses kubectl-style durations: `300`, `300s`, `5m`, `1h`, `1m30s`. Pure. */
export const parseDurationMs = (text: string): number | undefined => {
  const t = text.trim()
  if (/^\d+$/.test(t)) return Number(t) * 1000
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
  let total = 0
  let consumed = 0
  for (const m of t.matchAll(re)) {
    total += Number(m[1]) * unit[m[2] as keyof typeof unit]
    consumed += m[0].length
  }
  return consumed === t.length && consumed > 0 ? total : undefined
}
