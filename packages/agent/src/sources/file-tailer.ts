/**
 * Follows a plain log file like `tail -F`: starts at the end (old content is history), reads appends
 * as fs.watch on the parent directory reports them, follows rotation by inode (drains the old file,
 * then reads the new one from its start) and restarts at 0 when the file is truncated (seen as the
 * size dropping below the read offset; as with tail -F, a truncation refilled past the old offset before
 * the next read cannot be told from an append). A missing file is waited for; a missing directory too,
 * through a watch of its nearest existing ancestor; if the directory cannot be watched, a 250 ms poll takes
 * over until it can. A directory that is removed (or replaced) under the watch is waited for again: an inotify
 * watch follows the directory's inode, not its path, so it would otherwise stay on the removed one and never
 * report the new file (found by test/reliability/hostileSources.itest.ts).
 */
import { type FSWatcher, promises as fsp, statSync, watch } from "node:fs"
import { basename, dirname } from "node:path"
import { type DirectoryAppearance, whenDirectoryExists } from "./directory-appearance.ts"
import {
  type Coalescer,
  type LineCounts,
  makeCoalescer,
  makeLineSource,
  type Timer,
  every
} from "./line-source.ts"
import type { SourceLog } from "./source-log.ts"

export interface FileTailerOptions {
  readonly path: string
  /** Read an already existing file from its start instead of its end. */
  readonly fromStart?: boolean
  readonly onLine: (line: string) => void
  readonly onTruncatedLine: () => void
  /** Lines it rejects are neither counted nor delivered. */
  readonly accept?: (line: string) => boolean
  /** Called with true once the file is open, false while it is missing. */
  readonly onWatching?: (watching: boolean) => void
  readonly log: SourceLog
  /** Where the line source counts (default: its own). */
  readonly counts?: LineCounts
}

export interface FileTailer {
  /** Settles once the start position is fixed (end of the existing file, or the file is missing). */
  readonly ready: Promise<void>
  /** Reads whatever is new now (also runs on every watch event). */
  readonly poke: () => Promise<void>
  readonly stop: () => Promise<void>
  readonly counts: LineCounts
}

const FALLBACK_POLL_MS = 250

export const startFileTailer = (options: FileTailerOptions): FileTailer => {
  const { path, log } = options
  const lines = makeLineSource({
    onLine: options.onLine,
    onTruncatedLine: options.onTruncatedLine,
    ...(options.accept !== undefined ? { accept: options.accept } : {}),
    ...(options.counts !== undefined ? { counts: options.counts } : {})
  })
  let handle: fsp.FileHandle | undefined
  let ino = -1
  let offset = 0
  let firstOpen = !(options.fromStart ?? false)
  let stopped = false
  let watcher: FSWatcher | undefined
  let poll: Timer | undefined
  let appearance: DirectoryAppearance | undefined

  const drain = (h: fsp.FileHandle) =>
    lines.drain(async (buffer) => {
      const { bytesRead } = await h.read(buffer, 0, buffer.length, offset)
      offset += bytesRead
      return bytesRead
    })

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
      lines.flush()
    }
    await drain(h)
    // Rotation: the path now names another inode (or nothing). Drain the old one again first: a writer may
    // have appended to it after the drain above and before the rename that the stat sees.
    const current = await fsp.stat(path).catch(() => undefined)
    if (current === undefined || current.ino !== ino) {
      await drain(h)
      lines.flush()
      await closeHandle()
      log("info", "log file rotated; following the new file", { path })
      if (current !== undefined && (await open())) await drain(handle!)
    }
  }

  const reads: Coalescer = makeCoalescer(check, (e) =>
    log("warn", "reading log file failed", { path, error: String(e) })
  )
  const poke = reads.poke

  const dir = dirname(path)
  /** The watched directory's identity (device and inode), to tell it from a new directory at the same path. */
  let watchedDir = ""
  const dirIdentity = (): string => {
    try {
      const st = statSync(dir)
      return st.isDirectory() ? `${st.dev}:${st.ino}` : ""
    } catch {
      return ""
    }
  }

  /**
   * The watched directory itself was removed or renamed (inotify's IN_DELETE_SELF/IN_MOVE_SELF, reported with
   * the directory's own name): watch the one now at the path, or wait for it to appear.
   */
  const directoryChanged = () => {
    if (stopped || watcher === undefined) return
    if (dirIdentity() === watchedDir) {
      void poke()
      return
    }
    log("info", "log directory removed or replaced; waiting for it", { path })
    watcher.close()
    watcher = undefined
    // Drains what is left of the open file; reads the new one if it is there already.
    void poke()
    if (!startWatch()) waitForDirectory()
  }

  const startWatch = (): boolean => {
    try {
      const name = basename(path)
      const dirName = basename(dir)
      const identity = dirIdentity()
      const w = watch(dir, { persistent: false }, (_event, filename) => {
        if (filename === dirName) directoryChanged()
        else if (filename === null || filename === name || String(filename).startsWith(name)) void poke()
      })
      watcher = w
      watchedDir = identity
      w.on("error", (e) => {
        log("warn", "watch of log directory failed; polling every 250 ms", { path, error: String(e) })
        w.close()
        if (watcher === w) watcher = undefined
        startPoll()
      })
      return true
    } catch {
      return false
    }
  }

  const startPoll = () => {
    if (poll !== undefined || stopped) return
    poll = every(FALLBACK_POLL_MS, () => {
      if (watcher === undefined && startWatch()) {
        poll?.stop()
        poll = undefined
      }
      void poke()
    })
  }

  function waitForDirectory(): void {
    appearance?.stop()
    appearance = whenDirectoryExists(dir, () => {
      appearance = undefined
      if (stopped) return
      if (startWatch()) void poke()
      else startPoll()
    })
  }

  if (!startWatch()) waitForDirectory()
  const ready = poke()

  const stop = async () => {
    stopped = true
    watcher?.close()
    appearance?.stop()
    poll?.stop()
    await reads.stop()
    await closeHandle()
  }
  return { ready, poke, stop, counts: lines.counts }
}
