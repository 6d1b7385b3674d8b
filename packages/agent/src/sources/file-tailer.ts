/**
 * Follows a plain log file like `tail -F`: starts at the end (old content is history), reads appends
 * as fs.watch on the parent directory reports them, follows rotation by inode (drains the old file,
 * then reads the new one from its start) and restarts at 0 when the file is truncated (seen as the
 * size dropping below the read offset; as with tail -F, a truncation refilled past the old offset before
 * the next read cannot be told from an append). A missing file is waited for; a missing directory too,
 * through a watch of its nearest existing ancestor; if the directory cannot be watched, a 250 ms poll takes
 * over until it can.
 */
import { type FSWatcher, promises as fsp, watch } from "node:fs"
import { basename, dirname } from "node:path"
import { type DirectoryAppearance, whenDirectoryExists } from "./directory-appearance.ts"
import { makeLineSplitter } from "./line-splitter.ts"
import type { SourceLog } from "./source-log.ts"

export interface FileTailerOptions {
  readonly path: string
  /** Read an already existing file from its start instead of its end. */
  readonly fromStart?: boolean
  readonly onLine: (line: string) => void
  readonly onTruncatedLine: () => void
  /** Called with true once the file is open, false while it is missing. */
  readonly onWatching?: (watching: boolean) => void
  readonly log: SourceLog
}

export interface FileTailer {
  /** Settles once the start position is fixed (end of the existing file, or the file is missing). */
  readonly ready: Promise<void>
  /** Reads whatever is new now (also runs on every watch event). */
  readonly poke: () => Promise<void>
  readonly stop: () => Promise<void>
}

const CHUNK = 64 * 1024
const FALLBACK_POLL_MS = 250

export const startFileTailer = (options: FileTailerOptions): FileTailer => {
  const { path, log } = options
  const splitter = makeLineSplitter(options.onLine, options.onTruncatedLine)
  const buffer = Buffer.allocUnsafe(CHUNK)
  let handle: fsp.FileHandle | undefined
  let ino = -1
  let offset = 0
  let firstOpen = !(options.fromStart ?? false)
  let stopped = false
  let watcher: FSWatcher | undefined
  let poll: NodeJS.Timeout | undefined
  let appearance: DirectoryAppearance | undefined
  let running: Promise<void> | undefined
  let again = false

  const drain = async (h: fsp.FileHandle) => {
    for (;;) {
      const { bytesRead } = await h.read(buffer, 0, CHUNK, offset)
      if (bytesRead === 0) return
      offset += bytesRead
      splitter.push(buffer.subarray(0, bytesRead))
    }
  }

  const open = async (): Promise<boolean> => {
    try {
      const h = await fsp.open(path, "r")
      const st = await h.stat()
      handle = h
      ino = st.ino
      offset = firstOpen ? st.size : 0
      firstOpen = false
      options.onWatching?.(true)
      return true
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT")
        log("warn", "cannot open log file", { path, error: String(e) })
      firstOpen = false
      options.onWatching?.(false)
      return false
    }
  }

  const closeHandle = async () => {
    const h = handle
    handle = undefined
    if (h !== undefined) await h.close().catch(() => undefined)
  }

  const check = async () => {
    if (handle === undefined && !(await open())) return
    const h = handle!
    const st = await h.stat()
    if (st.size < offset) {
      log("warn", "log file truncated; reading from its start", { path, size: st.size, offset })
      offset = 0
      splitter.flush()
    }
    await drain(h)
    // Rotation: the path now names another inode (or nothing). Drain the old one again first: a writer may
    // have appended to it after the drain above and before the rename that the stat sees.
    const current = await fsp.stat(path).catch(() => undefined)
    if (current === undefined || current.ino !== ino) {
      await drain(h)
      splitter.flush()
      await closeHandle()
      log("info", "log file rotated; following the new file", { path })
      if (current !== undefined && (await open())) await drain(handle!)
    }
  }

  const poke = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    if (running !== undefined) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await check().catch((e) => log("warn", "reading log file failed", { path, error: String(e) }))
      } while (again && !stopped)
      running = undefined
    })()
    return running
  }

  const startWatch = (): boolean => {
    try {
      const name = basename(path)
      watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name || String(filename).startsWith(name)) void poke()
      })
      watcher.on("error", (e) => {
        log("warn", "watch of log directory failed; polling every 250 ms", { path, error: String(e) })
        watcher?.close()
        watcher = undefined
        startPoll()
      })
      return true
    } catch {
      return false
    }
  }

  const startPoll = () => {
    if (poll !== undefined || stopped) return
    poll = setInterval(() => {
      if (watcher === undefined && startWatch()) {
        clearInterval(poll)
        poll = undefined
      }
      void poke()
    }, FALLBACK_POLL_MS)
    poll.unref()
  }

  if (!startWatch())
    appearance = whenDirectoryExists(dirname(path), () => {
      appearance = undefined
      if (stopped) return
      if (startWatch()) void poke()
      else startPoll()
    })
  const ready = poke()

  const stop = async () => {
    stopped = true
    watcher?.close()
    appearance?.stop()
    if (poll !== undefined) clearInterval(poll)
    await running
    await closeHandle()
  }
  return { ready, poke, stop }
}
