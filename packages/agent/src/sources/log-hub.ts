/**
 * One reader per log resource, shared by every subscriber: /dev/kmsg, one journalctl for all journal
 * identifiers, one tailer per file, one pod-log reader per pod name. Each keeps counters (lines read,
 * lines cut, bytes read, malformed records, kmsg sequence gaps) and a watching/not-watching status. Lines, cuts
 * and bytes are counted by the readers' line sources (line-source.ts) into the source's counters. The journal is
 * one journalctl (one line source) for several sources: its line source counts all its entries, and here each
 * entry is attributed to its source once it names its identifier; its bytes and cut lines are reported on its
 * first source (as the cuts were before).
 */
import { join } from "node:path"
import type { LogRecord, LogSourceId } from "../rules/rule.ts"
import { startFileTailer } from "./file-tailer.ts"
import { startJournalReader } from "./journal-reader.ts"
import { startKmsgReader } from "./kmsg-reader.ts"
import { type LineCounts, zeroLineCounts } from "./line-source.ts"
import { lineTimestamp } from "./line-timestamp.ts"
import { startPodLogReader } from "./pod-log-reader.ts"
import type { SourceLog } from "./source-log.ts"

export interface SourceCounters extends LineCounts {
  malformed: number
  /** Kernel records lost before they were read (sequence gaps, EPIPE). */
  kmsgSequenceGaps: number
}

export type SourceStatus = "starting" | "watching" | "not-watching"

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
  const now = options.now ?? Date.now
  const sources = [...new Set(options.sources)]
  const listeners = new Map<LogSourceId, Set<(record: LogRecord) => void>>()
  const counters = new Map<LogSourceId, SourceCounters>()
  const status = new Map<LogSourceId, SourceStatus>()
  for (const s of sources) {
    listeners.set(s, new Set())
    counters.set(s, zero())
    status.set(s, "starting")
  }
  const emit = (source: LogSourceId, text: string, timestampMs: number) => {
    const record: LogRecord = { source, text, timestampMs }
    for (const l of listeners.get(source)!) l(record)
  }
  const bump = (source: LogSourceId, key: keyof SourceCounters, by = 1) => {
    counters.get(source)![key] += by
  }
  /** A cut line (counted by the line source) is logged at most once a minute per source, with the count so far. */
  const lastTruncationLog = new Map<LogSourceId, number>()
  const truncated = (source: LogSourceId) => () => {
    const t = now()
    if (t - (lastTruncationLog.get(source) ?? Number.NEGATIVE_INFINITY) < 60_000) return
    lastTruncationLog.set(source, t)
    options.log("warn", "log line longer than the line bound; matched its head, dropped the rest", {
      source,
      linesTruncated: (source === journalIds[0] ? journalCounts : counters.get(source)!).linesTruncated
    })
  }
  const watching = (ids: readonly LogSourceId[]) => (on: boolean) => {
    for (const id of ids) status.set(id, on ? "watching" : "not-watching")
  }
  const log =
    (source: string): SourceLog =>
    (level, message, fields) =>
      options.log(level, message, { source, ...fields })

  const journalCounts = zeroLineCounts()
  const stops: (() => Promise<void>)[] = []
  const journalIds = sources.filter((s) => s.startsWith("journal:"))
  for (const source of sources) {
    if (source === "dmesg") {
      const reader = await startKmsgReader({
        hostRoot: options.hostRoot,
        onRecord: (text, at) => emit(source, text, at),
        onTruncatedLine: truncated(source),
        onSequenceGap: (n) => bump(source, "kmsgSequenceGaps", n),
        onMalformed: () => bump(source, "malformed"),
        onWatching: watching([source]),
        log: log(source),
        counts: counters.get(source)!,
        ...(options.kmsgLookbackMs !== undefined ? { lookbackMs: options.kmsgLookbackMs } : {}),
        now
      })
      stops.push(reader.stop)
    } else if (source.startsWith("file:")) {
      const tailer = startFileTailer({
        path: join(options.hostRoot, source.slice("file:".length)),
        onLine: (line) => emit(source, line, lineTimestamp(line, now())),
        onTruncatedLine: truncated(source),
        onWatching: watching([source]),
        log: log(source),
        counts: counters.get(source)!
      })
      await tailer.ready
      stops.push(tailer.stop)
    } else if (source.startsWith("podlogs:")) {
      const reader = await startPodLogReader({
        hostRoot: options.hostRoot,
        name: source.slice("podlogs:".length),
        onLine: (line) => emit(source, line, lineTimestamp(line, now())),
        onTruncatedLine: truncated(source),
        onWatching: watching([source]),
        log: log(source),
        counts: counters.get(source)!
      })
      stops.push(reader.stop)
    }
  }
  if (journalIds.length > 0) {
    const reader = await startJournalReader({
      hostRoot: options.hostRoot,
      identifiers: journalIds.map((s) => s.slice("journal:".length)),
      onEntry: (ident, message, at) => {
        const source: LogSourceId = `journal:${ident}`
        bump(source, "linesRead")
        emit(source, message, at)
      },
      onMalformed: () => bump(journalIds[0]!, "malformed"),
      onTruncatedLine: truncated(journalIds[0]!),
      onWatching: watching(journalIds),
      log: log("journal"),
      counts: journalCounts,
      ...(options.journalctl !== undefined ? { journalctl: options.journalctl } : {}),
      now
    })
    stops.push(reader.stop)
  }

  return {
    sources,
    subscribe: (source, listener) => {
      const set = listeners.get(source)
      if (set === undefined) throw new Error(`log source ${source} is not opened by this hub`)
      set.add(listener)
      return () => set.delete(listener)
    },
    counters: () =>
      Object.fromEntries(
        [...counters].map(([k, v]) => [
          k,
          k === journalIds[0]
            ? { ...v, linesTruncated: journalCounts.linesTruncated, bytesRead: journalCounts.bytesRead }
            : { ...v }
        ])
      ),
    status: () => Object.fromEntries(status),
    stop: async () => {
      await Promise.all(stops.map((s) => s()))
    }
  }
}
