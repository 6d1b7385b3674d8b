export { readBootTimeMs } from "./boot-time.ts"
export { type FileTailer, startFileTailer } from "./file-tailer.ts"
export { type JournalReader, startJournalReader } from "./journal-reader.ts"
export { type KmsgRecord, parseKmsgRecord } from "./kmsg-record.ts"
export { type KmsgReader, startKmsgReader } from "./kmsg-reader.ts"
export { makeLineSplitter } from "./line-splitter.ts"
export { lineTimestamp } from "./line-timestamp.ts"
export { type LogHub, type SourceCounters, type SourceStatus, startLogHub } from "./log-hub.ts"
export { LOG_READERS, type PlannedWatcher, plannedWatchers, UnknownLogReader } from "./log-readers.ts"
export type {
  LogReaderRegistration,
  LogWatcher,
  ReaderSink,
  WatchedSource,
  WatcherConfig
} from "./log-watcher.ts"
export {
  FINDINGS_DROPPED,
  FINDINGS_SHED,
  LOG_SOURCE_METRICS,
  type LogMetrics,
  type LogMonitors,
  type LogMonitorsOptions,
  LogMonitorsService,
  makeLogMonitors,
  type ShedReport
} from "./log-monitors.ts"
export { type FindingLanes, makeFindingLanes, NEWS_WINDOW_MS, REPEATS_PER_SOURCE } from "./finding-lanes.ts"
export { type PodLogReader, startPodLogReader } from "./pod-log-reader.ts"
export type { SourceLog } from "./source-log.ts"
export {
  type ChunkRead,
  type Coalescer,
  type LineCounts,
  type LineSource,
  type LineSourceOptions,
  makeCoalescer,
  makeLineSource
} from "./line-source.ts"
