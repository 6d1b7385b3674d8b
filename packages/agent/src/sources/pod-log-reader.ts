/**
 * Follows the container log files of the kube-system pods named NAME-* (e.g. kube-proxy):
 * <host>/var/log/pods/kube-system_NAME-<hash>_<uid>/NAME/<restart>.log, in CRI format
 * (`<RFC3339Nano> <stream> <P|F> <message>`). Unlike NMA, which lists the files once at start, new pods
 * and container restarts are picked up as fs.watch reports them (no recursive watch: on a busy node the
 * pods directory sees every container's writes). A directory removed and created again (the pods directory,
 * a pod's or a container's) is watched again: an inotify watch follows the inode, not the path (found by
 * test/reliability/hostileSources.itest.ts).
 */
import { type FSWatcher, promises as fsp, statSync, watch } from "node:fs"
import { basename, join } from "node:path"
import { type DirectoryAppearance, whenDirectoryExists } from "./directory-appearance.ts"
import { type FileTailer, startFileTailer } from "./file-tailer.ts"
import { every, type LineCounts, makeCoalescer, type Timer, zeroLineCounts } from "./line-source.ts"
import type { SourceLog } from "./source-log.ts"

export interface PodLogReaderOptions {
  readonly hostRoot: string
  readonly name: string
  readonly onLine: (line: string) => void
  readonly onTruncatedLine: () => void
  readonly onWatching: (watching: boolean) => void
  readonly log: SourceLog
  /** Where the line sources of all its files count (default: an object of its own). */
  readonly counts?: LineCounts
}

export interface PodLogReader {
  readonly rescan: () => Promise<void>
  readonly stop: () => Promise<void>
  /** Lines of all its files (their line sources count into this one object). */
  readonly counts: LineCounts
}

const RESCAN_FALLBACK_MS = 250

/** A directory's device and inode ("" when it is not a directory now). */
const dirIdentity = (dir: string): string => {
  try {
    const st = statSync(dir)
    return st.isDirectory() ? `${st.dev}:${st.ino}` : ""
  } catch {
    return ""
  }
}

export const startPodLogReader = async (options: PodLogReaderOptions): Promise<PodLogReader> => {
  const podsDir = join(options.hostRoot, "var/log/pods")
  const prefix = `kube-system_${options.name}-`
  const tailers = new Map<string, FileTailer>()
  const counts = options.counts ?? zeroLineCounts()
  let initial = true
  let stopped = false

  const listLogFiles = async (): Promise<string[]> => {
    const pods = await fsp.readdir(podsDir).catch(() => [] as string[])
    const files: string[] = []
    for (const pod of pods) {
      if (!pod.startsWith(prefix)) continue
      const containerDir = join(podsDir, pod, options.name)
      const names = await fsp.readdir(containerDir).catch(() => [] as string[])
      for (const n of names) if (/^\d+\.log$/.test(n)) files.push(join(containerDir, n))
    }
    return files
  }

  /**
   * Non-recursive watches: the pods directory (pods come and go), each matching pod directory (its
   * container directory appears) and each container directory (restarts add N.log). Only creations and
   * removals ("rename") trigger a rescan; the log writes of every pod on the node do not.
   */
  const dirWatchers = new Map<string, { readonly watcher: FSWatcher; readonly identity: string }>()
  const watchDir = (dir: string) => {
    if (stopped) return
    const identity = dirIdentity(dir)
    const existing = dirWatchers.get(dir)
    if (existing !== undefined) {
      // The same path, but a directory created again since the watch: the old watch sees nothing of it.
      if (existing.identity === identity) return
      existing.watcher.close()
      dirWatchers.delete(dir)
    }
    try {
      const w = watch(dir, { persistent: false }, (event) => {
        if (event === "rename") void rescan()
      })
      w.on("error", () => {
        w.close()
        if (dirWatchers.get(dir)?.watcher === w) dirWatchers.delete(dir)
        void rescan()
      })
      dirWatchers.set(dir, { watcher: w, identity })
    } catch {
      // gone again; the pods-directory watch reports it
    }
  }

  const scan = async () => {
    const pods = (await fsp.readdir(podsDir).catch(() => [] as string[])).filter((p) => p.startsWith(prefix))
    const dirs = new Set(pods.flatMap((p) => [join(podsDir, p), join(podsDir, p, options.name)]))
    for (const dir of dirs) watchDir(dir)
    for (const [dir, { watcher: w }] of dirWatchers)
      if (!dirs.has(dir)) {
        w.close()
        dirWatchers.delete(dir)
      }
    const files = new Set(await listLogFiles())
    for (const file of files) {
      if (tailers.has(file) || stopped) continue
      const tailer = startFileTailer({
        path: file,
        // Files present at start are history; files that appear later are read from their start.
        fromStart: !initial,
        onLine: options.onLine,
        onTruncatedLine: options.onTruncatedLine,
        log: options.log,
        counts
      })
      tailers.set(file, tailer)
      await tailer.ready
    }
    for (const [file, tailer] of tailers) {
      if (files.has(file)) continue
      tailers.delete(file)
      await tailer.stop()
    }
    initial = false
    options.onWatching(true)
  }

  const scans = makeCoalescer(scan, (e) =>
    options.log("warn", "scanning pod logs failed", { podsDir, error: String(e) })
  )
  const rescan = scans.poke

  let watcher: FSWatcher | undefined
  let poll: Timer | undefined
  let appearance: DirectoryAppearance | undefined
  const startPoll = () => {
    if (poll !== undefined || stopped) return
    poll = every(RESCAN_FALLBACK_MS, () => {
      if (watcher === undefined) void startWatch()
      void rescan()
    })
  }
  /**
   * The pods directory itself was removed or renamed (reported with its own name): rescan (its tailers stop)
   * and watch the directory now at the path, or wait for one to appear.
   */
  const podsDirChanged = (w: FSWatcher, identity: string) => {
    if (stopped || watcher !== w || dirIdentity(podsDir) === identity) return
    options.log("info", "pod log directory removed or replaced; waiting for it", { podsDir })
    w.close()
    watcher = undefined
    void rescan()
    void startWatch().then(() => {
      if (watcher === undefined && !stopped) waitForPodsDir()
    })
  }
  // Until the pods directory exists, a watch of its nearest ancestor waits for it; whenever it cannot be
  // watched, rescan every 250 ms.
  const waitForPodsDir = () => {
    appearance?.stop()
    appearance = whenDirectoryExists(podsDir, () => {
      appearance = undefined
      void startWatch().then(() => {
        if (watcher === undefined) startPoll()
      })
    })
  }
  const startWatch = async () => {
    const st = await fsp.stat(podsDir).catch(() => undefined)
    if (st?.isDirectory() !== true || stopped || watcher !== undefined) return
    try {
      const identity = `${st.dev}:${st.ino}`
      const self = basename(podsDir)
      const w = watch(podsDir, { persistent: false }, (_event, filename) => {
        if (filename === self) podsDirChanged(w, identity)
        else if (filename === null || String(filename).startsWith(prefix)) void rescan()
      })
      watcher = w
      w.on("error", (e) => {
        options.log("warn", "watch of pod log directory failed; rescanning every 250 ms", {
          podsDir,
          error: String(e)
        })
        w.close()
        if (watcher === w) watcher = undefined
        startPoll()
      })
      poll?.stop()
      poll = undefined
      void rescan()
    } catch {
      startPoll()
    }
  }
  await startWatch()
  if (watcher === undefined) waitForPodsDir()
  await rescan()

  return {
    rescan,
    counts,
    stop: async () => {
      stopped = true
      watcher?.close()
      appearance?.stop()
      for (const { watcher: w } of dirWatchers.values()) w.close()
      poll?.stop()
      await scans.stop()
      await Promise.all([...tailers.values()].map((t) => t.stop()))
    }
  }
}
