/**
 * Follows the container log files of the kube-system pods named NAME-* (e.g. kube-proxy):
 * <host>/var/log/pods/kube-system_NAME-<hash>_<uid>/NAME/<restart>.log, in CRI format
 * (`<RFC3339Nano> <stream> <P|F> <message>`). Unlike NMA, which lists the files once at start, new pods
 * and container restarts are picked up as fs.watch reports them.
 */
import { type FSWatcher, promises as fsp, watch } from "node:fs"
import { join } from "node:path"
import { type FileTailer, startFileTailer } from "./file-tailer.ts"
import type { SourceLog } from "./source-log.ts"

export interface PodLogReaderOptions {
  readonly hostRoot: string
  readonly name: string
  readonly onLine: (line: string) => void
  readonly onTruncatedLine: () => void
  readonly onWatching: (watching: boolean) => void
  readonly log: SourceLog
}

export interface PodLogReader {
  readonly rescan: () => Promise<void>
  readonly stop: () => Promise<void>
}

const RESCAN_FALLBACK_MS = 250

export const startPodLogReader = async (options: PodLogReaderOptions): Promise<PodLogReader> => {
  const podsDir = join(options.hostRoot, "var/log/pods")
  const prefix = `kube-system_${options.name}-`
  const tailers = new Map<string, FileTailer>()
  let initial = true
  let stopped = false
  let scanning: Promise<void> | undefined
  let again = false

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

  const scan = async () => {
    const files = new Set(await listLogFiles())
    for (const file of files) {
      if (tailers.has(file) || stopped) continue
      const tailer = startFileTailer({
        path: file,
        // Files present at start are history; files that appear later are read from their start.
        fromStart: !initial,
        onLine: options.onLine,
        onTruncatedLine: options.onTruncatedLine,
        log: options.log
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

  const rescan = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    if (scanning !== undefined) {
      again = true
      return scanning
    }
    scanning = (async () => {
      do {
        again = false
        await scan().catch((e) =>
          options.log("warn", "scanning pod logs failed", { podsDir, error: String(e) })
        )
      } while (again && !stopped)
      scanning = undefined
    })()
    return scanning
  }

  let watcher: FSWatcher | undefined
  let poll: NodeJS.Timeout | undefined
  const startPoll = () => {
    if (poll !== undefined || stopped) return
    poll = setInterval(() => {
      if (watcher === undefined) void startWatch()
      void rescan()
    }, RESCAN_FALLBACK_MS)
    poll.unref()
  }
  // Recursive watches report a missing directory asynchronously: check first, fall back to a poll
  // (at most 250 ms) until the directory exists and can be watched.
  const startWatch = async () => {
    const st = await fsp.stat(podsDir).catch(() => undefined)
    if (st?.isDirectory() !== true || stopped || watcher !== undefined) return
    try {
      const w = watch(podsDir, { recursive: true, persistent: false }, () => void rescan())
      watcher = w
      w.on("error", (e) => {
        options.log("warn", "watch of pod log directory failed; rescanning every 250 ms", {
          podsDir,
          error: String(e)
        })
        w.close()
        watcher = undefined
        startPoll()
      })
      if (poll !== undefined) {
        clearInterval(poll)
        poll = undefined
      }
      void rescan()
    } catch {
      startPoll()
    }
  }
  await startWatch()
  if (watcher === undefined) startPoll()
  await rescan()

  return {
    rescan,
    stop: async () => {
      stopped = true
      watcher?.close()
      if (poll !== undefined) clearInterval(poll)
      await scanning
      await Promise.all([...tailers.values()].map((t) => t.stop()))
    }
  }
}
