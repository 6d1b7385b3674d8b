/**
 * What the scenario checks about the order of repairs, as pure functions of one consistent read (the Events as one
 * list call returned them, the controller's own journal record), not of several reads taken at different times:
 * two reads a few milliseconds apart can see a success and the next start in the wrong order.
 */

/**
 * Microseconds since the epoch of a metav1.Time or MicroTime ("2026-12-02T22:34:49.500123Z"; the fraction is
 * optional), or of a Date (client-node parses metav1.Time fields into Dates, and leaves MicroTime ones such as
 * eventTime as strings); undefined when it does not parse. Numbers stay exact (below 2^53 until the year 2255).
 */
export const microsOf = (time) => {
  if (time instanceof Date) return Number.isNaN(time.getTime()) ? undefined : time.getTime() * 1000
  if (typeof time !== "string") return undefined
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(time)
  if (!m) return undefined
  const seconds = Date.parse(`${m[1]}${m[3]}`)
  if (Number.isNaN(seconds)) return undefined
  return seconds * 1000 + Number((m[2] ?? "").padEnd(6, "0").slice(0, 6))
}

/** When an Event (core/v1 view of an events.k8s.io/v1 Event) happened, in microseconds: eventTime first. */
export const eventMicros = (e) =>
  microsOf(e.eventTime ?? undefined) ??
  microsOf(e.series?.lastObservedTime ?? undefined) ??
  microsOf(e.firstTimestamp ?? undefined) ??
  microsOf(e.lastTimestamp ?? undefined) ??
  microsOf(e.metadata?.creationTimestamp ?? undefined)

const STARTS = new Set(["RepairStarted"])
const ENDS = new Set(["RepairSucceeded", "RepairFailed"])

/**
 * Replays the repairs' starts and ends of `events` (one list, in any order: `{ node, reason, at }` with `at` in
 * microseconds) in time order and returns the first moment more than `maxInFlight` were in flight, as
 * `{ node, at, inFlight }` (the node whose start made it one too many, the nodes in flight then), or undefined.
 * An end and a start at the same instant count the end first: the controller gives the slot back before the
 * next repair takes it, and Event times are whole milliseconds.
 */
export const firstInFlightExcess = (events, maxInFlight) => {
  const steps = events
    .filter((e) => STARTS.has(e.reason) || ENDS.has(e.reason))
    .map((e) => ({ ...e, end: ENDS.has(e.reason) }))
    .sort((a, b) => a.at - b.at || Number(b.end) - Number(a.end))
  const inFlight = new Set()
  for (const s of steps) {
    if (s.end) inFlight.delete(s.node)
    else {
      inFlight.add(s.node)
      if (inFlight.size > maxInFlight) return { node: s.node, at: s.at, inFlight: [...inFlight] }
    }
  }
  return undefined
}

/**
 * Capacity first, from the controller's own clock: the ReplacementReady Event of `node` (microseconds) came no
 * later than the drain its journal record says began (`drainStartedAt`, ISO). Returns why not, or undefined.
 */
export const capacityFirstViolation = ({ node, record, replacementReadyAt }) => {
  if (record === undefined) return `${node}: no journal record with drainStartedAt was seen`
  if (record.order !== "capacityFirst")
    return `${node}: repaired ${record.order ?? "in no order"}, not capacity first`
  if (record.fallback !== undefined) return `${node}: capacity first fell back: ${record.fallback}`
  const drainAt = microsOf(record.drainStartedAt)
  if (drainAt === undefined) return `${node}: the journal record has no drainStartedAt`
  if (replacementReadyAt === undefined) return `${node}: no ReplacementReady Event`
  if (replacementReadyAt > drainAt)
    return `${node}: drain began at ${record.drainStartedAt}, ${(replacementReadyAt - drainAt) / 1000} ms before its replacement was Ready`
  return undefined
}

/**
 * The what-if replay of the scenario's recording against what the controller did: which nodes it repaired, and
 * when. `live`: the controller's RepairStarted per node (`{ node, at }`, microseconds); `replayed`: the `repairs`
 * and `holds` of `kubectl nodemend whatif -o json`. A node the replay still held for the in-flight budget when the
 * controller's repair deleted it (`cause: "budget"`, `outcome: "deleted"`) counts as repaired by both: which of the
 * queued nodes goes first is the controller's workers' race and the recording's order. `shifted`: the node repaired
 * after a zonal shift, which the recording does not hold: the replay starts it sooner, never later. The other
 * starts, in time order, must be within `toleranceMs` of each other. Returns what differs, or undefined.
 */
export const whatIfMismatch = ({ live, replayed, shifted, toleranceMs }) => {
  const replayStart = new Map(replayed.repairs.map((r) => [r.node, Date.parse(r.startedAt) * 1000]))
  const firstLive = replayed.holds.filter((h) => h.cause === "budget" && h.outcome === "deleted")
  const replayNodes = new Set([...replayStart.keys(), ...firstLive.map((h) => h.node)])
  const liveNodes = new Set(live.map((l) => l.node))
  const onlyLive = [...liveNodes].filter((n) => !replayNodes.has(n))
  const onlyReplay = [...replayNodes].filter((n) => !liveNodes.has(n))
  if (onlyLive.length || onlyReplay.length)
    return `repaired only by the controller: [${onlyLive.join(", ")}]; only in the replay: [${onlyReplay.join(", ")}]`
  if (shifted !== undefined) {
    const l = live.find((x) => x.node === shifted)?.at
    const r = replayStart.get(shifted)
    if (l === undefined || r === undefined) return `${shifted} (zonal shift) was not repaired by both`
    if (r > l)
      return `${shifted}: the replay started it after the controller did, though it knows no zonal shift`
  }
  const starts = (xs) => xs.filter((x) => x !== undefined).sort((a, b) => a - b)
  const liveStarts = starts(live.filter((l) => l.node !== shifted).map((l) => l.at))
  const replayStarts = starts([...replayStart].filter(([n]) => n !== shifted).map(([, t]) => t))
  for (let i = 0; i < Math.min(liveStarts.length, replayStarts.length); i++) {
    const apart = Math.abs(liveStarts[i] - replayStarts[i]) / 1000
    if (apart > toleranceMs)
      return `repair start ${i + 1}: the controller at ${new Date(liveStarts[i] / 1000).toISOString()}, the replay at ${new Date(replayStarts[i] / 1000).toISOString()} (${(apart / 1000).toFixed(1)} s apart)`
  }
  return undefined
}
