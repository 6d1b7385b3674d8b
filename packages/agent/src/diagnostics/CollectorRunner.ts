/**
 * Runs one collector into a spool directory: source -> redaction -> byte cap -> file. Every run is bounded by
 * its timeout (and the capture's overall AbortSignal); a command that overruns is killed with its process
 * group, and the run returns anyway, so a wedged collector never holds up the bundle.
 */
import { spawn } from "node:child_process"
import { createReadStream, createWriteStream } from "node:fs"
import { lstat, mkdir, readdir, readlink, rm } from "node:fs/promises"
import { setPriority } from "node:os"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { Readable, Transform, type TransformCallback } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { Collector, CollectorDefaults } from "./Collectors.ts"
import { redactionTransform, redactText } from "./Redaction.ts"

export type CollectorOutcome = "ok" | "error" | "skipped"

export interface CollectorResult {
  readonly name: string
  readonly category: string
  readonly output: string
  readonly outcome: CollectorOutcome
  readonly durationMs: number
  /** Why it failed or was skipped (already redacted). */
  readonly detail?: string
}

class CollectorTimeout extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`)
  }
}

class NotPresent extends Error {}

/** Passes at most `max` bytes, then appends a marker and drops the rest (keeps reading so the source can finish). */
const byteCap = (max: number): Transform => {
  let seen = 0
  let marked = false
  return new Transform({
    transform(chunk: Buffer, _e, cb: TransformCallback) {
      if (seen >= max) {
        if (!marked) {
          marked = true
          cb(null, Buffer.from(`\n[nodemend: truncated at ${max} bytes]\n`))
          return
        }
        cb()
        return
      }
      const part = seen + chunk.length > max ? chunk.subarray(0, max - seen) : chunk
      seen += chunk.length
      cb(null, part)
    }
  })
}

const toFile = async (
  source: Readable,
  file: string,
  maxBytes: number,
  signal: AbortSignal
): Promise<void> => {
  await mkdir(dirname(file), { recursive: true })
  await pipeline(source, redactionTransform(), byteCap(maxBytes), createWriteStream(file), { signal })
}

const runCommand = (
  argv: ReadonlyArray<string>,
  file: string,
  maxBytes: number,
  timeoutMs: number,
  signal: AbortSignal
): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const [cmd, ...args] = argv
    if (!cmd) return reject(new Error("empty command"))
    // Own process group, so a timeout kills whatever the command started too.
    const child = spawn(cmd, args, {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, LC_ALL: "C" }
    })
    // Diagnosis must not slow detection: collectors run at the lowest CPU priority.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, 19)
      } catch {
        // Not permitted here: run at normal priority.
      }
    }
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString("utf8")
    })
    let settled = false
    const finish = (err?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal.removeEventListener("abort", onAbort)
      if (err) reject(err)
      else resolve()
    }
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
    // Raw: a collector is promise code on a child process, off the detection path (agent-runtime.md).
    const timer = setTimeout(() => {
      kill()
      // Do not wait for pipes a stuck grandchild may hold open.
      child.stdout.destroy()
      finish(new CollectorTimeout(timeoutMs))
    }, timeoutMs)
    const onAbort = () => {
      kill()
      child.stdout.destroy()
      finish(new Error("capture deadline reached"))
    }
    signal.addEventListener("abort", onAbort, { once: true })
    const written = toFile(child.stdout, file, maxBytes, signal)
    child.once("error", (e: NodeJS.ErrnoException) => {
      // Let the (empty) output file be created first, so a skipped collector's file can be removed.
      const err = e.code === "ENOENT" ? new NotPresent(`${cmd} not installed`) : e
      written.then(
        () => finish(err),
        () => finish(err)
      )
    })
    child.once("close", (code, sig) => {
      written.then(
        () => {
          if (code === 0) finish()
          else {
            const why = sig ? `killed by ${sig}` : `exited with code ${code}`
            const tail = redactText(stderr.trim()).split("\n").slice(-3).join(" | ")
            finish(new Error(tail ? `${why}: ${tail}` : why))
          }
        },
        (e: Error) => finish(e)
      )
    })
    written.catch(() => undefined)
  })

const withTimeout = async <A>(
  timeoutMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<A>
): Promise<A> => {
  const ctl = new AbortController()
  const onAbort = () => ctl.abort(signal.reason)
  signal.addEventListener("abort", onAbort, { once: true })
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      run(ctl.signal),
      new Promise<never>((_, reject) => {
        // Raw, as the command's timer: it aborts a provider's AbortSignal.
        timer = setTimeout(() => {
          ctl.abort(new CollectorTimeout(timeoutMs))
          reject(new CollectorTimeout(timeoutMs))
        }, timeoutMs)
      })
    ])
  } finally {
    clearTimeout(timer)
    signal.removeEventListener("abort", onAbort)
  }
}

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code === "ENOENT"

/**
 * Follows symlinks the way the host would see them: an absolute target is taken under the host root, and the
 * result must stay under the host root (the agent container's own files are never read by mistake).
 */
export const resolveHostPath = async (hostRoot: string, path: string): Promise<string> => {
  const root = resolve(hostRoot)
  const under = root.endsWith(sep) ? root : `${root}${sep}`
  let current = resolve(root, path)
  for (let hops = 0; hops < 8; hops++) {
    if (current !== root && !current.startsWith(under))
      throw new Error(`${path} resolves outside the host root`)
    const st = await lstat(current)
    if (!st.isSymbolicLink()) {
      if (!st.isFile()) throw new Error(`${relative(root, current)} is not a regular file`)
      return current
    }
    const target = await readlink(current)
    current = isAbsolute(target) ? join(root, target) : resolve(dirname(current), target)
  }
  throw new Error(`${path}: too many symlinks`)
}

const copyHostFile = async (
  hostRoot: string,
  path: string,
  file: string,
  maxBytes: number,
  signal: AbortSignal
) => {
  const real = await resolveHostPath(hostRoot, path)
  await toFile(createReadStream(real), file, maxBytes, signal)
}

export const runCollector = async (
  c: Collector,
  hostRoot: string,
  spoolDir: string,
  defaults: CollectorDefaults,
  signal: AbortSignal
): Promise<CollectorResult> => {
  // Raw, as the timers: a collector's duration for the bundle's manifest.
  const started = performance.now()
  const timeoutMs = c.timeoutMs ?? defaults.timeoutMs
  const maxBytes = c.maxBytes ?? defaults.maxBytes
  const out = join(spoolDir, c.output)
  const result = (outcome: CollectorOutcome, detail?: string): CollectorResult => ({
    name: c.name,
    category: c.category,
    output: c.output,
    outcome,
    durationMs: Math.round(performance.now() - started),
    ...(detail === undefined ? {} : { detail })
  })
  const src = c.source
  try {
    switch (src._tag) {
      case "Command":
        await runCommand(src.argv, out, maxBytes, timeoutMs, signal)
        break
      case "File":
        await withTimeout(timeoutMs, signal, (s) => copyHostFile(hostRoot, src.path, out, maxBytes, s))
        break
      case "Directory":
        await withTimeout(timeoutMs, signal, async (s) => {
          const dir = join(hostRoot, src.path)
          const names = (await readdir(dir)).sort().slice(0, src.maxFiles ?? 200)
          await mkdir(out, { recursive: true })
          for (const n of names) {
            const st = await lstat(join(dir, n))
            if (st.isFile()) await copyHostFile(hostRoot, join(src.path, n), join(out, n), maxBytes, s)
          }
        })
        break
      case "Provider":
        await withTimeout(timeoutMs, signal, async (s) => {
          const value = await src.get(s)
          const text = typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`
          await toFile(Readable.from([Buffer.from(text, "utf8")]), out, maxBytes, s)
        })
        break
    }
    return result("ok")
  } catch (e) {
    const optional = "optional" in src && src.optional === true
    if (e instanceof NotPresent || (isMissing(e) && src._tag !== "Command")) {
      if (optional) await rm(out, { recursive: true, force: true }).catch(() => undefined)
      return optional
        ? result("skipped", e instanceof Error ? e.message : String(e))
        : result("error", String((e as Error).message))
    }
    return result("error", redactText(e instanceof Error ? e.message : String(e)))
  }
}
