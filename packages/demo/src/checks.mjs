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
 * when. `live`: the controller's RepairStarted per node (`{ node, at }`, microseconds); `queuedLive`: the nodes the
 * controller queued for a slot (RepairQueued); `replayed`: the `repairs` and `holds` of `kubectl nodemend whatif -o
 * json`. Which of the nodes due together take the free slots is the controller's workers' race and the recording's
 * order, so those nodes (queued live, or held for the budget by the replay) are judged as a group: their start
 * times in order, not node by node; a node the replay still held when the controller's repair deleted it (`cause:
 * "budget"`, `outcome: "deleted"`) counts as repaired by both. `shifted`: the node repaired after a zonal shift,
 * which the recording does not hold: the replay starts it sooner, never later. Every other node's start must be
 * within `toleranceMs` in both. Returns what differs, or undefined.
 */
export const whatIfMismatch = ({ live, queuedLive = [], replayed, shifted, toleranceMs }) => {
  const replayStart = new Map(replayed.repairs.map((r) => [r.node, Date.parse(r.startedAt) * 1000]))
  const liveStart = new Map(live.map((l) => [l.node, l.at]))
  const budget = replayed.holds.filter((h) => h.cause === "budget")
  const firstLive = budget.filter((h) => h.outcome === "deleted").map((h) => h.node)
  const replayNodes = new Set([...replayStart.keys(), ...firstLive])
  const onlyLive = [...liveStart.keys()].filter((n) => !replayNodes.has(n))
  const onlyReplay = [...replayNodes].filter((n) => !liveStart.has(n))
  if (onlyLive.length || onlyReplay.length)
    return `repaired only by the controller: [${onlyLive.join(", ")}]; only in the replay: [${onlyReplay.join(", ")}]`
  if (shifted !== undefined) {
    const l = liveStart.get(shifted)
    const r = replayStart.get(shifted)
    if (l === undefined || r === undefined) return `${shifted} (zonal shift) was not repaired by both`
    if (r > l)
      return `${shifted}: the replay started it after the controller did, though it knows no zonal shift`
  }
  const iso = (us) => new Date(us / 1000).toISOString()
  const apart = (a, b) => Math.abs(a - b) / 1000
  const raced = new Set([...budget.map((h) => h.node), ...queuedLive])
  for (const [node, l] of liveStart) {
    const r = replayStart.get(node)
    if (node === shifted || raced.has(node) || r === undefined || apart(l, r) <= toleranceMs) continue
    return `${node}: the controller started it at ${iso(l)}, the replay at ${iso(r)} (${(apart(l, r) / 1000).toFixed(1)} s apart)`
  }
  const inOrder = (starts) =>
    [...raced]
      .map((n) => starts.get(n))
      .filter((t) => t !== undefined)
      .sort((a, b) => a - b)
  const liveRaced = inOrder(liveStart)
  const replayRaced = inOrder(replayStart)
  for (let i = 0; i < Math.min(liveRaced.length, replayRaced.length); i++)
    if (apart(liveRaced[i], replayRaced[i]) > toleranceMs)
      return `start ${i + 1} of the nodes due together (${[...raced].join(", ")}): the controller at ${iso(liveRaced[i])}, the replay at ${iso(replayRaced[i])} (${(apart(liveRaced[i], replayRaced[i]) / 1000).toFixed(1)} s apart)`
  return undefined
}
