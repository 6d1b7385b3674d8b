/**
 * The one interface of every log reader, as node-problem-detector's log watchers have one (`LogWatcher`: Watch,
 * Stop; created by name from a `WatcherConfig`): a reader is created for its sources, `watch` opens them at their
 * start position, `stop` closes them. What it reads goes to the log hub's sink, which keeps each source's
 * listeners, counters and status. The readers are registered by name in log-readers.ts.
 */
import type { LogSourceId } from "../rules/rule.ts"
import type { LineCounts } from "./line-source.ts"
import type { SourceLog } from "./source-log.ts"

export interface SourceCounters extends LineCounts {
  malformed: number
  /** Kernel records lost before they were read (sequence gaps, EPIPE). */
  kmsgSequenceGaps: number
}

export type SourceStatus = "starting" | "watching" | "not-watching"

/** Where a reader reports about its sources (the log hub's side). */
export interface ReaderSink {
  /** A line of the source, with the time it was written at the source (ms since epoch). */
  readonly line: (source: LogSourceId, text: string, timestampMs: number) => void
  /** The callback a reader's line source calls when it cuts a line of the source. */
  readonly truncated: (source: LogSourceId) => () => void
  /** The source's counters, which its line sources count into. */
  readonly counters: (source: LogSourceId) => SourceCounters
  /** The callback that reports the sources watching (true) or not watching (false). */
  readonly watching: (sources: readonly LogSourceId[]) => (on: boolean) => void
  readonly log: (name: string) => SourceLog
}

/** One source of a reader: its id and the part after the reader's name (`/var/log/x` of `file:/var/log/x`). */
export interface WatchedSource {
  readonly id: LogSourceId
  readonly argument: string
}

export interface WatcherConfig {
  readonly hostRoot: string
  /** One source, or every source of a reader registered as shared (the journal's one journalctl). */
  readonly sources: readonly [WatchedSource, ...WatchedSource[]]
  readonly sink: ReaderSink
  readonly now: () => number
  readonly journalctl?: string
  readonly kmsgLookbackMs?: number
}

export interface LogWatcher {
  /** Opens the sources at their start position; settles once they are (lines flow to the sink from then on). */
  readonly watch: () => Promise<void>
  /** Closes what `watch` opened (nothing if it was never called). */
  readonly stop: () => Promise<void>
}

export interface LogReaderRegistration {
  /** One watcher for all of the reader's sources, instead of one per source. */
  readonly shared: boolean
  readonly create: (config: WatcherConfig) => LogWatcher
}

/** A watcher of what `open` opens and the stop it returns; stop waits for an open under way. */
export const watcherOf = (open: () => Promise<() => Promise<void>>): LogWatcher => {
  let opened: Promise<() => Promise<void>> | undefined
  return {
    watch: async () => {
      opened ??= open()
      await opened
    },
    stop: async () => {
      if (opened !== undefined) await (await opened)()
    }
  }
}
