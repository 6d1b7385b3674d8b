/**
 * The one line source under every log reader (file tailer, pod-log reader, journal reader, kmsg reader):
 *
 * - chunked reads from a byte source: pulled (`drain`: a file, /dev/kmsg) into one buffer of `chunkBytes`, or
 *   pushed (`attach`: journalctl's stdout);
 * - line splitting (line-splitter.ts, bounded carry-over: a line longer than the bound is cut and counted);
 * - backpressure: every line of a chunk is handed to the consumer synchronously, and the next chunk is read only
 *   once the consumer has returned (and once `afterChunk`, if it returns a Promise, has settled; a pushed stream is
 *   paused meanwhile). What is held is one chunk plus one partial line, never a queue of chunks;
 * - the one place lines are counted (`counts`: lines delivered, lines cut, bytes read);
 * - one coalescer for wake-ups (`makeCoalescer`: a poke while a run is going schedules exactly one more run);
 * - the readers' timers (`after`, `every`).
 *
 * Why callbacks and raw timers here, not Effect fibers and Clock/Schedule: the readers run on every node for the
 * agent's whole life and ADR 0008 holds an idle agent to 68 MiB RSS; a reader costs one closure and one (lazily
 * allocated) buffer, and a timer is one unref'd libuv timer that does not keep the process up or wake it while
 * the watch works. Their owner (log-monitors.ts) is Effect code and scopes them (start in the Scope, stop in its
 * finalizer). Every timer of the readers is created here, so there is one place to look for them.
 */
import type { Readable } from "node:stream"
import { makeLineSplitter, MAX_LINE_BYTES } from "./line-splitter.ts"

/**
 * What a line source counts (the log hub hands each reader its source's counters, so these are the Prometheus
 * series' numbers; several line sources may count into one object: a pod's files, journalctl restarts).
 */
export interface LineCounts {
  /** Lines delivered to the consumer (after `accept`). */
  linesRead: number
  /** Lines longer than the bound, delivered cut. */
  linesTruncated: number
  bytesRead: number
}

export const zeroLineCounts = (): LineCounts => ({ linesRead: 0, linesTruncated: 0, bytesRead: 0 })

export interface LineSourceOptions {
  readonly onLine: (line: string) => void
  readonly onTruncatedLine: () => void
  /** Lines it rejects are neither counted nor delivered (kmsg dictionary continuation lines). */
  readonly accept?: (line: string) => boolean
  /** Awaited after each chunk's lines were delivered, before the next chunk is read (backpressure). */
  readonly afterChunk?: () => void | Promise<void>
  readonly maxLineBytes?: number
  /** Size of one read, and of the slices a pushed chunk is taken in (default 16 KiB). */
  readonly chunkBytes?: number
  /** Where to count (default: an object of its own). */
  readonly counts?: LineCounts
}

/** Reads into `buffer` (at most `buffer.length` bytes) and returns how many bytes it read; 0 is the end for now. */
export type ChunkRead = (buffer: Buffer) => Promise<number>

export interface LineSource {
  /** Reads chunk after chunk until `read` returns 0 (or `stop`), splitting each before reading the next. */
  readonly drain: (read: ChunkRead) => Promise<void>
  /** Follows a stream (journalctl's stdout): one chunk at a time, paused while the consumer is busy. */
  readonly attach: (stream: Readable) => void
  /** Delivers a trailing partial line (at EOF of a rotated file, at the end of a stream). */
  readonly flush: () => void
  readonly counts: LineCounts
  /** Ends `drain` after its current read. */
  readonly stop: () => void
}

/**
 * 16 KiB, not 64: a chunk's lines are strings sliced from one string of the whole chunk, alive until its last line
 * is handled, and in a storm of fault lines a 64 KiB chunk's outlived the agent's 1 MiB young generation and was
 * promoted: 115-141 MiB peak RSS in a 100% storm against 89-91 MiB at 16 KiB, for 20-25% fewer lines a second
 * (docs/performance.md, "Storms on every source").
 */
export const DEFAULT_CHUNK_BYTES = 16 * 1024

export const makeLineSource = (options: LineSourceOptions): LineSource => {
  const counts = options.counts ?? zeroLineCounts()
  const accept = options.accept
  const onLine = options.onLine
  const splitter = makeLineSplitter(
    accept === undefined
      ? (line) => {
          counts.linesRead++
          onLine(line)
        }
      : (line) => {
          if (!accept(line)) return
          counts.linesRead++
          onLine(line)
        },
    () => {
      counts.linesTruncated++
      options.onTruncatedLine()
    },
    options.maxLineBytes ?? MAX_LINE_BYTES
  )
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  // Allocated on the first read: a source whose file never appears holds no buffer.
  let buffer: Buffer | undefined
  let stopped = false

  const take = (chunk: Buffer) => {
    counts.bytesRead += chunk.length
    splitter.push(chunk)
  }

  const drain = async (read: ChunkRead) => {
    buffer ??= Buffer.allocUnsafe(chunkBytes)
    while (!stopped) {
      const n = await read(buffer)
      if (n <= 0) return
      take(buffer.subarray(0, n))
      const after = options.afterChunk?.()
      if (after !== undefined) await after
    }
  }

  // A pipe hands over what it holds (up to 64 KiB): taken `chunkBytes` at a time, as `drain` reads, each slice's
  // lines handled (and `afterChunk` settled) before the next; the stream is paused while one is awaited.
  const attach = (stream: Readable) => {
    stream.on("data", (chunk: Buffer) => {
      let at = 0
      const next = (): void => {
        while (at < chunk.length) {
          take(chunk.subarray(at, at + chunkBytes))
          at += chunkBytes
          const after = options.afterChunk?.()
          if (after !== undefined) {
            if (!stream.isPaused()) stream.pause()
            void Promise.resolve(after).finally(next)
            return
          }
        }
        if (stream.isPaused()) stream.resume()
      }
      next()
    })
    stream.on("end", () => splitter.flush())
  }

  return {
    drain,
    attach,
    flush: splitter.flush,
    counts,
    stop: () => {
      stopped = true
    }
  }
}

export interface Coalescer {
  /**
   * Runs the task now or, while it runs, makes sure it runs exactly once more after the current run (any number of
   * pokes during a run make one more run). Settles when the runs started or scheduled by this poke have ended.
   */
  readonly poke: () => Promise<void>
  /** No more runs; settles once the current run has ended. */
  readonly stop: () => Promise<void>
}

/** The readers' one coalescer of wake-ups (watch events, polls, rescans). A failed run is reported, not thrown. */
export const makeCoalescer = (task: () => Promise<void>, onError: (error: unknown) => void): Coalescer => {
  let running: Promise<void> | undefined
  let again = false
  let stopped = false
  const poke = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    if (running !== undefined) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await task().catch(onError)
      } while (again && !stopped)
      running = undefined
    })()
    return running
  }
  return {
    poke,
    stop: async () => {
      stopped = true
      await running
    }
  }
}

export interface Timer {
  readonly stop: () => void
}

/** Calls `f` once after `ms` (unref'd: it does not keep the process up). */
export const after = (ms: number, f: () => void): Timer => {
  // Raw: the readers are callback code on fs/child-process events, outside any fiber (docs/agent-runtime.md).
  const t = setTimeout(f, ms)
  t.unref()
  return { stop: () => clearTimeout(t) }
}

/** Calls `f` every `ms` until stopped (unref'd). */
export const every = (ms: number, f: () => void): Timer => {
  // Raw, as `after`: callback code outside any fiber.
  const t = setInterval(f, ms)
  t.unref()
  return { stop: () => clearInterval(t) }
}
