/**
 * Reads kernel log records from <host>/dev/kmsg.
 *
 * On a real host it is a character device: every read() returns exactly one record (header line plus
 * ` KEY=VALUE` continuation lines) and blocks until one is logged; EPIPE means records were overwritten
 * in the ring buffer before we read them. Node has no lseek, so the reader drains the ring buffer first
 * and skips records older than its start (minus `lookbackMs`). The blocking read occupies one libuv
 * threadpool thread for the life of the reader (and until the next record after it is stopped).
 *
 * In tests it is a regular file the test appends records to; it is tailed like a log file.
 *
 * Either way a sequence number that jumps is a gap: counted, logged, never silent.
 */
import { promises as fsp } from "node:fs"
import { join } from "node:path"
import { readBootTimeMs } from "./boot-time.ts"
import { type FileTailer, startFileTailer } from "./file-tailer.ts"
import { parseKmsgRecord } from "./kmsg-record.ts"
import { type ChunkRead, type LineCounts, makeLineSource } from "./line-source.ts"
import type { SourceLog } from "./source-log.ts"

export interface KmsgReaderOptions {
  readonly hostRoot: string
  readonly onRecord: (text: string, timestampMs: number) => void
  readonly onTruncatedLine: () => void
  readonly onSequenceGap: (missing: number) => void
  readonly onMalformed: () => void
  readonly onWatching: (watching: boolean) => void
  readonly log: SourceLog
  /** Character device only: replay records this much older than the start (default 0). */
  readonly lookbackMs?: number
  readonly now?: () => number
  /** Where the line source counts records (default: an object of its own). */
  readonly counts?: LineCounts
}

export interface KmsgReader {
  readonly stop: () => Promise<void>
  /** Records read (header lines; dictionary continuation lines are not counted). */
  readonly counts: LineCounts
}

/** A record's header line; lines starting with a space are its dictionary (` KEY=VALUE`). */
const isRecordLine = (line: string): boolean => line.length > 0 && !line.startsWith(" ")

/** Largest record the kernel returns (printk's LOG_LINE_MAX plus the dictionary), rounded up. */
const RECORD_BUFFER = 16 * 1024

export const startKmsgReader = async (options: KmsgReaderOptions): Promise<KmsgReader> => {
  const path = join(options.hostRoot, "dev/kmsg")
  // Raw default only for callers outside Effect; the log hub passes the agent's Clock.
  const now = options.now ?? Date.now
  const bootMs = await readBootTimeMs(options.hostRoot, now())
  if (bootMs === undefined)
    options.log(
      "warn",
      "host boot time unknown (no proc/stat btime or proc/uptime); kmsg records get read time",
      {
        hostRoot: options.hostRoot
      }
    )
  let lastSeq: number | undefined

  const handleRecord = (raw: string, skipBeforeMs: number) => {
    const record = parseKmsgRecord(raw)
    if (record === undefined) {
      options.onMalformed()
      options.log("warn", "malformed /dev/kmsg record; matched as plain text", { record: raw.slice(0, 200) })
      options.onRecord(raw, now())
      return
    }
    if (lastSeq !== undefined && record.seq > lastSeq + 1) {
      const missing = record.seq - lastSeq - 1
      options.onSequenceGap(missing)
      options.log("warn", "kernel log sequence gap: records were lost", { missing, after: lastSeq })
    }
    lastSeq = record.seq
    const at = bootMs === undefined ? now() : bootMs + Math.floor(record.usecSinceBoot / 1000)
    if (at < skipBeforeMs) return
    options.onRecord(record.text, at)
  }

  const st = await fsp.stat(path).catch(() => undefined)
  if (st?.isCharacterDevice() === true) return startDevice(path, options, handleRecord, now)

  // Regular file (or not there yet): tail it; lines starting with a space are dictionary continuations.
  const tailer: FileTailer = startFileTailer({
    path,
    accept: isRecordLine,
    onLine: (line) => handleRecord(line, Number.NEGATIVE_INFINITY),
    onTruncatedLine: options.onTruncatedLine,
    onWatching: options.onWatching,
    log: options.log,
    ...(options.counts !== undefined ? { counts: options.counts } : {})
  })
  await tailer.ready
  return { stop: tailer.stop, counts: tailer.counts }
}

const startDevice = async (
  path: string,
  options: KmsgReaderOptions,
  handleRecord: (raw: string, skipBeforeMs: number) => void,
  now: () => number
): Promise<KmsgReader> => {
  const skipBeforeMs = now() - (options.lookbackMs ?? 0)
  // Every read() returns one whole record (header line and dictionary lines, each ending in a newline: the kernel
  // escapes control characters in the text), so the line source's splitter never carries a partial line here.
  const lines = makeLineSource({
    accept: isRecordLine,
    onLine: (line) => handleRecord(line, skipBeforeMs),
    onTruncatedLine: options.onTruncatedLine,
    chunkBytes: RECORD_BUFFER,
    ...(options.counts !== undefined ? { counts: options.counts } : {})
  })
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(path, "r")
  } catch (err) {
    options.log("error", "cannot open /dev/kmsg; kernel log not watched", { path, error: String(err) })
    options.onWatching(false)
    return { stop: async () => undefined, counts: lines.counts }
  }
  options.onWatching(true)
  let stopped = false
  const read: ChunkRead = async (buffer) => {
    for (;;) {
      try {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
        if (stopped) return 0
        if (bytesRead > 0) return bytesRead
      } catch (e) {
        if (stopped) return 0
        const code = (e as NodeJS.ErrnoException).code
        if (code === "EPIPE")
          // The next record's sequence number shows how many were lost; it is counted there.
          options.log("warn", "kernel ring buffer overwrote records before they were read (EPIPE)")
        else if (code !== "EAGAIN" && code !== "EINTR") throw e
      }
    }
  }
  // The read blocks until the kernel logs something: the handle is closed only once it has returned.
  void lines
    .drain(read)
    .catch((e) => {
      options.log("error", "reading /dev/kmsg failed; kernel log no longer watched", { error: String(e) })
      options.onWatching(false)
    })
    .finally(() => handle.close().catch(() => undefined))
  return {
    stop: async () => {
      stopped = true
      lines.stop()
    },
    counts: lines.counts
  }
}
