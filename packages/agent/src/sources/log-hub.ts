/**
 * One reader per log resource, shared by every subscriber: /dev/kmsg, one journalctl for all journal
 * identifiers, one tailer per file, one pod-log reader per pod name. Each source's watcher comes from the reader
 * its id names, in the registry (log-readers.ts); an id naming no reader is `UnknownLogReader`, before anything
 * opens. The hub keeps each source's listeners, counters (lines read, lines cut, bytes read, malformed records,
 * kmsg sequence gaps: the readers' line sources count into them, line-source.ts) and watching/not-watching status.
 */
import type { LogRecord, LogSourceId } from "../rules/rule.ts"
import { plannedWatchers } from "./log-readers.ts"
import type { ReaderSink, SourceCounters, SourceStatus } from "./log-watcher.ts"
import type { SourceLog } from "./source-log.ts"

export type { SourceCounters, SourceStatus } from "./log-watcher.ts"

export interface LogHub {
  readonly sources: readonly LogSourceId[]
  readonly subscribe: (source: LogSourceId, listener: (record: LogRecord) => void) => () => void
  readonly counters: () => Readonly<Partial<Record<LogSourceId, Readonly<SourceCounters>>>>
  readonly status: () => Readonly<Partial<Record<LogSourceId, SourceStatus>>>
  readonly stop: () => Promise<void>
}

export interface LogHubOptions {
  readonly hostRoot: string
  readonly sources: readonly LogSourceId[]
  readonly log: SourceLog
  readonly journalctl?: string
  readonly kmsgLookbackMs?: number
  readonly now?: () => number
}

const zero = (): SourceCounters => ({
  linesRead: 0,
  linesTruncated: 0,
  bytesRead: 0,
  malformed: 0,
  kmsgSequenceGaps: 0
})

export const startLogHub = async (options: LogHubOptions): Promise<LogHub> => {
  // Raw default only for callers outside Effect (tests, benches); the agent passes its Clock (log-monitors.ts).
  const now = options.now ?? Date.now
  const sources = [...new Set(options.sources)]
  const watchers = plannedWatchers(sources)
  const listeners = new Map<LogSourceId, Set<(record: LogRecord) => void>>()
  const counters = new Map<LogSourceId, SourceCounters>()
  const status = new Map<LogSourceId, SourceStatus>()
  for (const s of sources) {
    listeners.set(s, new Set())
    counters.set(s, zero())
    status.set(s, "starting")
  }
  /** A cut line (counted by the line source) is logged at most once a minute per source, with the count so far. */
  const lastTruncationLog = new Map<LogSourceId, number>()
  const sink: ReaderSink = {
    line: (source, text, timestampMs) => {
      const record: LogRecord = { source, text, timestampMs }
      for (const l of listeners.get(source)!) l(record)
    },
    truncated: (source) => () => {
      const t = now()
      if (t - (lastTruncationLog.get(source) ?? Number.NEGATIVE_INFINITY) < 60_000) return
      lastTruncationLog.set(source, t)
      options.log("warn", "log line longer than the line bound; matched its head, dropped the rest", {
        source,
        linesTruncated: counters.get(source)!.linesTruncated
      })
    },
    counters: (source) => counters.get(source)!,
    watching: (ids) => (on) => {
      for (const id of ids) status.set(id, on ? "watching" : "not-watching")
    },
    log: (source) => (level, message, fields) => options.log(level, message, { source, ...fields })
  }

  const stops: (() => Promise<void>)[] = []
  for (const { registration, sources: watched } of watchers) {
    const watcher = registration.create({
      hostRoot: options.hostRoot,
      sources: watched,
      sink,
      now,
      ...(options.journalctl !== undefined ? { journalctl: options.journalctl } : {}),
      ...(options.kmsgLookbackMs !== undefined ? { kmsgLookbackMs: options.kmsgLookbackMs } : {})
    })
    await watcher.watch()
    stops.push(watcher.stop)
  }

  return {
    sources,
    subscribe: (source, listener) => {
      const set = listeners.get(source)
      if (set === undefined) throw new Error(`log source ${source} is not opened by this hub`)
      set.add(listener)
      return () => set.delete(listener)
    },
    counters: () => Object.fromEntries([...counters].map(([k, v]) => [k, { ...v }])),
    status: () => Object.fromEntries(status),
    stop: async () => {
      await Promise.all(stops.map((s) => s()))
    }
  }
}
