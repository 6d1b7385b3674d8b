/**
 * The min-occurrences gate: a match fires only when `minOccurrences` matches of the same (reason, subject)
 * fall within `windowSeconds`, measured on the records' source timestamps. After firing, the window
 * starts over, so a steady fault fires once per `minOccurrences` matches. Pure state, no clock.
 */
export interface OccurrenceGate {
  /** Records one match at `atMs`; true when it completes a window. */
  readonly admit: (key: string, atMs: number, minOccurrences: number, windowSeconds: number) => boolean
  /** Forgets the matches of a key (its fault cleared). */
  readonly reset: (key: string) => void
  readonly size: () => number
}

/** Bound on tracked (reason, subject) keys; the oldest key is forgotten first. */
const MAX_KEYS = 4096

export const makeOccurrenceGate = (maxKeys: number = MAX_KEYS): OccurrenceGate => {
  const seen = new Map<string, number[]>()
  const admit = (key: string, atMs: number, minOccurrences: number, windowSeconds: number): boolean => {
    if (minOccurrences <= 1) return true
    let times = seen.get(key)
    if (times === undefined) {
      if (seen.size >= maxKeys) seen.delete(seen.keys().next().value!)
      times = []
      seen.set(key, times)
    }
    const since = atMs - windowSeconds * 1000
    // Keep the times inside the window (records can arrive slightly out of order across sources).
    let keep = 0
    for (const t of times) if (t > since) times[keep++] = t
    times.length = keep
    times.push(atMs)
    if (times.length >= minOccurrences) {
      seen.delete(key)
      return true
    }
    return false
  }
  return { admit, reset: (key) => seen.delete(key), size: () => seen.size }
}
