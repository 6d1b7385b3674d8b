/**
 * Follows the host journal (<host>/var/log/journal, else <host>/run/log/journal) with one
 * `journalctl --follow --output=json` process for all the SYSLOG_IDENTIFIERs the rules read, starting
 * at the reader's start time. If journalctl is missing or no journal directory exists, the source is
 * reported as not watching (absent, not Unknown). If journalctl exits, it is restarted after the last
 * cursor it printed, with a capped backoff.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { promises as fsp, statSync } from "node:fs"
import { join } from "node:path"
import { parseJournalFields, readJournalFields } from "./journal-json.ts"
import { after, every, type LineCounts, makeLineSource, type Timer, zeroLineCounts } from "./line-source.ts"
import type { SourceLog } from "./source-log.ts"

export interface JournalReaderOptions {
  readonly hostRoot: string
  readonly identifiers: readonly string[]
  readonly onEntry: (identifier: string, message: string, timestampMs: number) => void
  readonly onMalformed: () => void
  readonly onTruncatedLine: () => void
  readonly onWatching: (watching: boolean) => void
  readonly log: SourceLog
  readonly journalctl?: string
  readonly now?: () => number
  /** Where journalctl's line sources count (default: an object of its own); one line is one entry. */
  readonly counts?: LineCounts
}

export interface JournalReader {
  /** Pid of the running journalctl, if any (diagnostics). */
  readonly pid: () => number | undefined
  readonly stop: () => Promise<void>
  /** journalctl's output lines (one per entry, any identifier), across restarts. */
  readonly counts: LineCounts
}

const JOURNAL_DIRS = ["var/log/journal", "run/log/journal"]
const MAX_JSON_LINE = 1024 * 1024
/** How often the journal directory's identity is looked at (one stat). */
const DIR_CHECK_MS = 5000

const findJournalDir = async (hostRoot: string): Promise<string | undefined> => {
  for (const dir of JOURNAL_DIRS) {
    const path = join(hostRoot, dir)
    const st = await fsp.stat(path).catch(() => undefined)
    if (st?.isDirectory() === true) return path
  }
  return undefined
}

const messageText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  // journalctl prints non-UTF-8 (or binary) field values as arrays of bytes.
  if (Array.isArray(value) && value.every((b) => typeof b === "number"))
    return Buffer.from(value).toString("utf8")
  return undefined
}

export const startJournalReader = async (options: JournalReaderOptions): Promise<JournalReader> => {
  const { log } = options
  // Raw default only for callers outside Effect; the log hub passes the agent's Clock.
  const now = options.now ?? Date.now
  const dir = await findJournalDir(options.hostRoot)
  if (dir === undefined) {
    log("warn", "no journal directory under the host root; journal sources not watched", {
      hostRoot: options.hostRoot
    })
    options.onWatching(false)
    return { pid: () => undefined, stop: async () => undefined, counts: zeroLineCounts() }
  }
  const wanted = new Set(options.identifiers)
  let startSec = Math.floor(now() / 1000)
  let cursor: string | undefined
  let child: ChildProcess | undefined
  let stopped = false
  let restartDelayMs = 1000
  let restartTimer: Timer | undefined
  const counts = options.counts ?? zeroLineCounts()

  const onLine = (line: string) => {
    if (line.length === 0) return
    const entry = readJournalFields(line) ?? parseJournalFields(line)
    if (entry === undefined) {
      options.onMalformed()
      log("warn", "journalctl printed a line that is not JSON", { line: line.slice(0, 200) })
      return
    }
    if (typeof entry.cursor === "string") cursor = entry.cursor
    const ident = entry.identifier
    const message = messageText(entry.message)
    const realtime = Number(entry.realtime)
    if (typeof ident !== "string" || !wanted.has(ident) || message === undefined) return
    restartDelayMs = 1000
    options.onEntry(ident, message, Number.isFinite(realtime) ? Math.floor(realtime / 1000) : now())
  }

  const run = () => {
    const position = cursor !== undefined ? [`--after-cursor=${cursor}`] : [`--since=@${startSec}`]
    const args = [
      `--directory=${dir}`,
      "--follow",
      // Without --merge, journalctl 252 --follow fails on a directory with no entries of the current boot.
      "--merge",
      "--output=json",
      "--all",
      "--no-pager",
      "--lines=all",
      ...position,
      ...[...wanted].map((id) => `SYSLOG_IDENTIFIER=${id}`)
    ]
    // A line source per process (a partial line of one journalctl is not continued by the next), one count.
    const lines = makeLineSource({
      onLine,
      onTruncatedLine: options.onTruncatedLine,
      maxLineBytes: MAX_JSON_LINE,
      counts
    })
    const proc = spawn(options.journalctl ?? "journalctl", args, { stdio: ["ignore", "pipe", "pipe"] })
    child = proc
    let stderr = ""
    lines.attach(proc.stdout)
    proc.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000)
    })
    proc.on("spawn", () => options.onWatching(true))
    proc.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") {
        log("warn", "journalctl not found; journal sources not watched", {
          journalctl: options.journalctl ?? "journalctl"
        })
        options.onWatching(false)
        stopped = true
        return
      }
      log("error", "journalctl failed", { error: String(e) })
    })
    proc.on("close", (code, signal) => {
      lines.flush()
      if (stopped) return
      options.onWatching(false)
      log("warn", "journalctl exited; restarting", {
        code,
        signal,
        stderr: stderr.trim(),
        inMs: restartDelayMs
      })
      restartTimer = after(restartDelayMs, run)
      restartDelayMs = Math.min(restartDelayMs * 2, 30_000)
    })
  }
  run()

  // `journalctl --follow --directory` on a directory that is removed neither exits nor sees the one that replaces
  // it: watch the directory's identity and, when it changes, restart from the time it changed (the old cursor does
  // not exist in the new journal).
  const identity = () => {
    try {
      const st = statSync(dir)
      return `${st.dev}:${st.ino}`
    } catch {
      return undefined
    }
  }
  let watched = identity()
  const dirCheck = every(DIR_CHECK_MS, () => {
    const current = identity()
    if (current === watched) return
    const replaced = current !== undefined
    watched = current
    if (!replaced) return
    log("warn", "journal directory replaced; reading it afresh", { dir })
    cursor = undefined
    startSec = Math.floor(now() / 1000) - DIR_CHECK_MS / 1000
    restartDelayMs = 1000
    child?.kill("SIGTERM")
  })

  return {
    counts,
    pid: () => (child?.exitCode === null && child.signalCode === null ? child.pid : undefined),
    stop: async () => {
      stopped = true
      dirCheck.stop()
      restartTimer?.stop()
      const proc = child
      if (proc?.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
        const closed = new Promise<void>((resolve) => proc.once("close", () => resolve()))
        proc.kill("SIGTERM")
        await closed
      }
    }
  }
}
