/**
 * Between the rule engine and the finding sink (issue #39): each finding is judged "is this news?" when the rule
 * engine makes it, before anything is bounded, so a storm sheds repeats and never a first occurrence.
 *
 * - News: a (reason, subject) its source has not reported for `newsWindowMs` (60 s), a Detection after that key's
 *   Resolution, and a Resolution after that key's Detection. News goes to one FIFO lane that is not bounded by a
 *   count: it is bounded by the keys tracked (at most `reasonsPerSource` reasons of `subjectsPerReason` subjects
 *   per source, each news at most once a window), so it holds at most a few thousand findings in any storm.
 * - Repeats (the same key again within the window, a Resolution of a key already resolved, and a key beyond the
 *   tracked bounds) go to their source's own bounded lane (`repeatsPerSource`). A full lane sheds the arriving
 *   repeat, counted per source and reason. One source's storm fills only its own lane.
 * - While its source's lane holds repeats (the sink is behind), a tracked key's repeats pass at most once a
 *   `repeatIntervalMs` (1 s); the others are shed at once, counted the same way. A repeat tells the sink nothing
 *   news did not (the rule engine has counted it already for its thresholds), and every repeat that reached the
 *   sink cost it a finding's time and garbage: a 100% kmsg storm was read at 11-20k lines/s with the lane full of
 *   repeats, 39-49k with them thinned (load 9-10; bench/storm-table.ts, docs/performance.md). A calm repeat (an
 *   empty lane) is always delivered: it raises its Event's series count.
 * - `take` hands out news first (in arrival order), then one repeat per source in turn. A repeat older than its
 *   key's latest news or Resolution is superseded (a cleared fault must not come back from the queue) and is
 *   shed at take, counted too.
 * Pure state: time comes in as `nowMs` (the agent's Clock).
 */
import type { Finding } from "../model.ts"
import type { LogSourceId } from "../rules/rule.ts"

export const NEWS_WINDOW_MS = 60_000
export const REPEATS_PER_SOURCE = 1024
export const REPEAT_INTERVAL_MS = 1_000

interface KeyState {
  newsAtMs: number
  /** When this key last went to the sink or its lane (news or repeat): a repeat sooner than the interval is shed. */
  passedAtMs: number
  resolved: boolean
  /** Repeats queued before this sequence number are superseded. */
  supersededSeq: number
}

interface Queued {
  readonly f: Finding
  readonly seq: number
  readonly state: KeyState | undefined
}

/** What a source shed of one reason: `count` in all, `recent` since the last `drainShed`. */
export interface ShedCount {
  readonly source: LogSourceId
  readonly monitor: Finding["monitor"]
  readonly reason: string
  count: number
  recent: number
}

export type Verdict = "news" | "queued" | "shed"

export interface FindingLanes {
  readonly offer: (source: LogSourceId, f: Finding, nowMs: number) => Verdict
  /** Up to `max` findings to deliver: news first, then the sources' repeats in turn. */
  readonly take: (max: number) => Finding[]
  readonly pending: () => number
  /** Every (source, reason) that shed something, with its counts. */
  readonly shed: () => readonly ShedCount[]
  /** How many (source, reason) pairs shed something (cheap: called on every shed finding). */
  readonly shedPairs: () => number
  /** The (source, reason) pairs that shed since the last call, most first; resets their `recent`. */
  readonly drainShed: () => readonly { source: LogSourceId; monitor: string; reason: string; count: number }[]
  readonly shedTotal: () => number
  /** Findings shed that were never tracked as a key (beyond the tracked bounds): possibly a first occurrence. */
  readonly untrackedShed: () => number
}

export interface FindingLanesOptions {
  readonly newsWindowMs?: number
  readonly repeatsPerSource?: number
  readonly reasonsPerSource?: number
  readonly subjectsPerReason?: number
  /** While the lane holds repeats, a key's repeats pass at most once an interval (default 1 s; 0: no thinning). */
  readonly repeatIntervalMs?: number
}

interface SourceLane {
  readonly keys: Map<string, Map<string, KeyState>>
  readonly repeats: Queued[]
  head: number
}

export const makeFindingLanes = (options: FindingLanesOptions = {}): FindingLanes => {
  const windowMs = options.newsWindowMs ?? NEWS_WINDOW_MS
  const capacity = options.repeatsPerSource ?? REPEATS_PER_SOURCE
  const maxReasons = options.reasonsPerSource ?? 512
  const maxSubjects = options.subjectsPerReason ?? 32
  const repeatIntervalMs = options.repeatIntervalMs ?? REPEAT_INTERVAL_MS
  const lanes = new Map<LogSourceId, SourceLane>()
  const news: Finding[] = []
  let newsHead = 0
  let seq = 0
  let repeatsPending = 0
  const shedBy = new Map<string, ShedCount>()
  let shedTotal = 0
  let untrackedShed = 0

  const laneOf = (source: LogSourceId): SourceLane => {
    let lane = lanes.get(source)
    if (lane === undefined) {
      lane = { keys: new Map(), repeats: [], head: 0 }
      lanes.set(source, lane)
    }
    return lane
  }
  /** Forgets the keys of a full map whose news is older than the window; true when there is room. */
  const makeRoom = <V>(map: Map<string, V>, max: number, stale: (v: V) => boolean): boolean => {
    if (map.size < max) return true
    for (const [k, v] of map) if (stale(v)) map.delete(k)
    return map.size < max
  }
  /** The key's state, created when there is room; undefined beyond the tracked bounds. */
  const stateOf = (lane: SourceLane, f: Finding, nowMs: number): [KeyState | undefined, boolean] => {
    const staleState = (s: KeyState) => nowMs - s.newsAtMs >= windowMs
    let subjects = lane.keys.get(f.reason)
    if (subjects === undefined) {
      const room = makeRoom(lane.keys, maxReasons, (m: Map<string, KeyState>) => {
        for (const s of m.values()) if (!staleState(s)) return false
        return true
      })
      if (!room) return [undefined, false]
      subjects = new Map()
      lane.keys.set(f.reason, subjects)
    }
    const subject = f.subject ?? ""
    const state = subjects.get(subject)
    if (state !== undefined) return [state, false]
    if (!makeRoom(subjects, maxSubjects, staleState)) return [undefined, false]
    const created: KeyState = {
      newsAtMs: nowMs,
      passedAtMs: nowMs,
      resolved: f._tag === "Resolution",
      supersededSeq: 0
    }
    subjects.set(subject, created)
    return [created, true]
  }
  const countShed = (source: LogSourceId, f: Finding) => {
    shedTotal++
    const key = `${source}\u0000${f.reason}`
    const c = shedBy.get(key)
    if (c !== undefined) {
      c.count++
      c.recent++
    } else shedBy.set(key, { source, monitor: f.monitor, reason: f.reason, count: 1, recent: 1 })
  }
  const isNews = (state: KeyState, f: Finding, nowMs: number): boolean => {
    if (f._tag === "Resolution") {
      if (state.resolved) return false
      state.resolved = true
      return true
    }
    if (!state.resolved && nowMs - state.newsAtMs < windowMs) return false
    state.resolved = false
    state.newsAtMs = nowMs
    return true
  }

  const offer = (source: LogSourceId, f: Finding, nowMs: number): Verdict => {
    const lane = laneOf(source)
    const n = ++seq
    const [state, created] = stateOf(lane, f, nowMs)
    if (state !== undefined && (created || isNews(state, f, nowMs))) {
      state.supersededSeq = n
      state.passedAtMs = nowMs
      news.push(f)
      return "news"
    }
    // Thinned only while the lane holds repeats (the sink is behind): a calm repeat is always delivered.
    const thinned =
      state !== undefined && lane.repeats.length > lane.head && nowMs - state.passedAtMs < repeatIntervalMs
    if (thinned || lane.repeats.length - lane.head >= capacity) {
      countShed(source, f)
      if (state === undefined) untrackedShed++
      return "shed"
    }
    if (state !== undefined) state.passedAtMs = nowMs
    lane.repeats.push({ f, seq: n, state })
    repeatsPending++
    return "queued"
  }

  const takeRepeat = (source: LogSourceId, lane: SourceLane): Finding | undefined => {
    while (lane.head < lane.repeats.length) {
      const q = lane.repeats[lane.head]!
      lane.repeats[lane.head++] = undefined as never
      repeatsPending--
      if (lane.head === lane.repeats.length) {
        lane.repeats.length = 0
        lane.head = 0
      } else if (lane.head > 1024 && lane.head * 2 > lane.repeats.length) {
        lane.repeats.splice(0, lane.head)
        lane.head = 0
      }
      if (q.state !== undefined && q.seq < q.state.supersededSeq) {
        countShed(source, q.f)
        continue
      }
      return q.f
    }
    return undefined
  }

  const take = (max: number): Finding[] => {
    const out: Finding[] = []
    while (out.length < max && newsHead < news.length) {
      out.push(news[newsHead]!)
      news[newsHead++] = undefined as never
    }
    if (newsHead === news.length) {
      news.length = 0
      newsHead = 0
    }
    while (out.length < max && repeatsPending > 0)
      for (const [source, lane] of lanes) {
        if (out.length >= max) break
        const f = takeRepeat(source, lane)
        if (f !== undefined) out.push(f)
      }
    return out
  }

  return {
    offer,
    take,
    pending: () => news.length - newsHead + repeatsPending,
    shed: () => [...shedBy.values()],
    shedPairs: () => shedBy.size,
    drainShed: () => {
      const recent = [...shedBy.values()]
        .filter((c) => c.recent > 0)
        .map((c) => ({ source: c.source, monitor: c.monitor, reason: c.reason, count: c.recent }))
        .sort((a, b) => b.count - a.count)
      for (const c of shedBy.values()) c.recent = 0
      return recent
    },
    shedTotal: () => shedTotal,
    untrackedShed: () => untrackedShed
  }
}
