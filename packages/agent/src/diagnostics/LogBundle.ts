/**
 * Assembles a log bundle: runs the selected collectors (a few at a time, each bounded) into a spool
 * directory, then streams that directory as `<node>/...` into a tar.gz file. Collector failures go to
 * `log-capture-errors.log` in the bundle; the bundle ships regardless.
 */
import { createWriteStream } from "node:fs"
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { join, relative } from "node:path"
import { pipeline } from "node:stream/promises"
import { DigestTap } from "./BundleDigest.ts"
import { type Collector, COLLECTOR_DEFAULTS, type CollectorDefaults } from "./Collectors.ts"
import { type CollectorResult, runCollector } from "./CollectorRunner.ts"
import type { BundleDigest, LogCategory } from "@nodemend/kube-access/NodeDiagnostic"
import { TarGzWriter } from "./TarGzWriter.ts"

export const ERRORS_FILE = "log-capture-errors.log"
export const MANIFEST_FILE = "manifest.json"

export interface BundleRequest {
  readonly nodeName: string
  readonly hostRoot: string
  readonly collectors: ReadonlyArray<Collector>
  readonly categories: ReadonlySet<LogCategory>
  /** Where the spool directory and the bundle file are created (not under the host root). */
  readonly workDir: string
  readonly concurrency?: number
  readonly defaults?: CollectorDefaults
  /** Whole-collection bound: collectors still running then are stopped and recorded as errors. */
  readonly deadlineMs?: number
  readonly signal?: AbortSignal
}

export interface Bundle {
  /** The tar.gz file; the caller owns it (delivers, then deletes). */
  readonly path: string
  /** SHA-256 and size of the file at `path`, taken as it was written. */
  readonly digest: BundleDigest
  readonly results: ReadonlyArray<CollectorResult>
  readonly errors: ReadonlyArray<CollectorResult>
  readonly collectionMs: number
  readonly totalMs: number
}

const walk = async (dir: string): Promise<string[]> => {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await walk(p)))
    else if (e.isFile()) out.push(p)
  }
  return out.sort()
}

/** Runs `tasks` with at most `n` in flight. */
const pool = async <A, B>(items: ReadonlyArray<A>, n: number, f: (a: A) => Promise<B>): Promise<B[]> => {
  const results: B[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await f(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker))
  return results
}

export const assembleBundle = async (req: BundleRequest): Promise<Bundle> => {
  // Raw: a bundle is promise code on child processes and AbortSignals, off the detection path (agent-runtime.md).
  const started = performance.now()
  const startedAt = new Date().toISOString()
  const spool = await mkdtemp(join(req.workDir, `nodemend-spool-${req.nodeName}-`))
  const deadline = new AbortController()
  // Raw, as `started`: the deadline aborts the collectors' AbortSignal.
  const timer = setTimeout(
    () => deadline.abort(new Error("capture deadline reached")),
    req.deadlineMs ?? 120_000
  )
  const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal
  try {
    const selected = req.collectors.filter((c) => req.categories.has(c.category))
    const results = await pool(selected, req.concurrency ?? 4, (c) =>
      runCollector(c, req.hostRoot, spool, req.defaults ?? COLLECTOR_DEFAULTS, signal)
    )
    const collectionMs = Math.round(performance.now() - started)
    const errors = results.filter((r) => r.outcome === "error")
    if (errors.length > 0) {
      await writeFile(
        join(spool, ERRORS_FILE),
        errors.map((e) => `${e.name} (${e.output}, ${e.durationMs} ms): ${e.detail ?? "failed"}\n`).join("")
      )
    }
    await writeFile(
      join(spool, MANIFEST_FILE),
      `${JSON.stringify(
        {
          node: req.nodeName,
          startedAt,
          finishedAt: new Date().toISOString(),
          collectionMs,
          categories: [...req.categories],
          collectors: results
        },
        null,
        2
      )}\n`
    )
    const path = join(req.workDir, `${req.nodeName}-logs.tar.gz`)
    // gzip -> digest -> file: the digest is of exactly the bytes written, without reading the file again.
    const tap = new DigestTap()
    const written = pipeline(tap, createWriteStream(path, { mode: 0o600 }))
    written.catch(() => undefined)
    const tar = new TarGzWriter(tap)
    for (const f of await walk(spool)) await tar.addFile(`${req.nodeName}/${relative(spool, f)}`, f)
    await tar.finish()
    await written
    return {
      path,
      digest: tap.digest(),
      results,
      errors,
      collectionMs,
      totalMs: Math.round(performance.now() - started)
    }
  } finally {
    clearTimeout(timer)
    await rm(spool, { recursive: true, force: true })
  }
}
