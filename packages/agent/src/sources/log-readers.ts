/**
 * The log readers by name, as node-problem-detector registers its log watchers (kmsg, journald, filelog): the
 * log hub creates each source's watcher from the reader its id names (rules/source-id.ts), never from the id's
 * shape. The typechecker holds this registry and the names of source-id.ts equal; an id naming no reader is
 * `UnknownLogReader`.
 */
import { join } from "node:path"
import { Data } from "effect"
import { type LogReaderName, parseSourceId } from "../rules/source-id.ts"
import { startFileTailer } from "./file-tailer.ts"
import { startJournalReader } from "./journal-reader.ts"
import { startKmsgReader } from "./kmsg-reader.ts"
import type { LineCounts } from "./line-source.ts"
import { lineTimestamp } from "./line-timestamp.ts"
import type { LogReaderRegistration, WatchedSource, WatcherConfig } from "./log-watcher.ts"
import { watcherOf } from "./log-watcher.ts"
import { startPodLogReader } from "./pod-log-reader.ts"

export class UnknownLogReader extends Data.TaggedError("UnknownLogReader")<{
  readonly source: string
  readonly message: string
}> {}

const dmesg: LogReaderRegistration = {
  shared: false,
  create: ({ hostRoot, sources: [{ id }], sink, now, kmsgLookbackMs }) =>
    watcherOf(async () => {
      const counters = sink.counters(id)
      const reader = await startKmsgReader({
        hostRoot,
        onRecord: (text, at) => sink.line(id, text, at),
        onTruncatedLine: sink.truncated(id),
        onSequenceGap: (n) => {
          counters.kmsgSequenceGaps += n
        },
        onMalformed: () => {
          counters.malformed++
        },
        onWatching: sink.watching([id]),
        log: sink.log(id),
        counts: counters,
        ...(kmsgLookbackMs !== undefined ? { lookbackMs: kmsgLookbackMs } : {}),
        now
      })
      return reader.stop
    })
}

const file: LogReaderRegistration = {
  shared: false,
  create: ({ hostRoot, sources: [{ id, argument }], sink, now }) =>
    watcherOf(async () => {
      const tailer = startFileTailer({
        path: join(hostRoot, argument),
        onLine: (line) => sink.line(id, line, lineTimestamp(line, now())),
        onTruncatedLine: sink.truncated(id),
        onWatching: sink.watching([id]),
        log: sink.log(id),
        counts: sink.counters(id)
      })
      await tailer.ready
      return tailer.stop
    })
}

const podlogs: LogReaderRegistration = {
  shared: false,
  create: ({ hostRoot, sources: [{ id, argument }], sink, now }) =>
    watcherOf(async () => {
      const reader = await startPodLogReader({
        hostRoot,
        name: argument,
        onLine: (line) => sink.line(id, line, lineTimestamp(line, now())),
        onTruncatedLine: sink.truncated(id),
        onWatching: sink.watching([id]),
        log: sink.log(id),
        counts: sink.counters(id)
      })
      return reader.stop
    })
}

/**
 * One journalctl for every identifier. Its entries count as lines read of their own source; its bytes and cut
 * lines (journalctl's JSON lines, any identifier) are counted on its first source.
 */
const journal: LogReaderRegistration = {
  shared: true,
  create: ({ hostRoot, sources, sink, now, journalctl }) =>
    watcherOf(async () => {
      const ids = sources.map((s) => s.id)
      const first = sink.counters(sources[0].id)
      const counts: LineCounts = {
        linesRead: 0,
        get linesTruncated() {
          return first.linesTruncated
        },
        set linesTruncated(n) {
          first.linesTruncated = n
        },
        get bytesRead() {
          return first.bytesRead
        },
        set bytesRead(n) {
          first.bytesRead = n
        }
      }
      const reader = await startJournalReader({
        hostRoot,
        identifiers: sources.map((s) => s.argument),
        onEntry: (ident, message, at) => {
          const source = `journal:${ident}` as const
          sink.counters(source).linesRead++
          sink.line(source, message, at)
        },
        onMalformed: () => {
          first.malformed++
        },
        onTruncatedLine: sink.truncated(sources[0].id),
        onWatching: sink.watching(ids),
        log: sink.log("journal"),
        counts,
        ...(journalctl !== undefined ? { journalctl } : {}),
        now
      })
      return reader.stop
    })
}

export const LOG_READERS: { readonly [Name in LogReaderName]: LogReaderRegistration } = {
  dmesg,
  journal,
  file,
  podlogs
}

export interface PlannedWatcher {
  readonly registration: LogReaderRegistration
  readonly sources: WatcherConfig["sources"]
}

/**
 * The watchers of these sources, in their order: one per source, or one for all of a shared reader's (opened
 * after the others, as the hub always opened the journal). Throws `UnknownLogReader` before any is created.
 */
export const plannedWatchers = (ids: readonly string[]): PlannedWatcher[] => {
  const own: PlannedWatcher[] = []
  const shared = new Map<LogReaderName, [WatchedSource, ...WatchedSource[]]>()
  for (const id of ids) {
    const parsed = parseSourceId(id)
    if (parsed._tag === "Refused") throw new UnknownLogReader({ source: id, message: parsed.message })
    const source: WatchedSource = { id: id as WatchedSource["id"], argument: parsed.argument }
    const registration = LOG_READERS[parsed.reader]
    if (!registration.shared) own.push({ registration, sources: [source] })
    else {
      const group = shared.get(parsed.reader)
      if (group === undefined) shared.set(parsed.reader, [source])
      else group.push(source)
    }
  }
  return [...own, ...[...shared].map(([name, sources]) => ({ registration: LOG_READERS[name], sources }))]
}
