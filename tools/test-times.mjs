// Prints where a test run spent its time: per package phase and per file, slowest first, from the vitest JSON
// reports that cluster-test configs write when NODEMEND_TEST_TIMES names a directory (`npm test` sets it).
//   node tools/test-times.mjs DIR [--top N]
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { REPO_ROOT } from "./cluster/versions.mjs"

/** Per-file rows ({ file, ms, tests, failed }) from vitest JSON reports (pure, for tests). */
export const fileTimes = (reports) =>
  reports.flatMap((r) =>
    (r.testResults ?? []).map((t) => ({
      file: relative(REPO_ROOT, t.name),
      ms: Math.max(0, (t.endTime ?? 0) - (t.startTime ?? 0)),
      tests: (t.assertionResults ?? []).length,
      failed: (t.assertionResults ?? []).filter((a) => a.status === "failed").length
    }))
  )

/** Per-package totals of the same rows, slowest first. */
export const packageTimes = (rows) => {
  const by = new Map()
  for (const r of rows) {
    const pkg = r.file.split("/").slice(0, 2).join("/")
    const p = by.get(pkg) ?? { pkg, ms: 0, files: 0 }
    p.ms += r.ms
    p.files += 1
    by.set(pkg, p)
  }
  return [...by.values()].sort((a, b) => b.ms - a.ms)
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(9)

export const render = (rows, top = 25) => {
  const sorted = [...rows].sort((a, b) => b.ms - a.ms)
  const total = rows.reduce((s, r) => s + r.ms, 0)
  const out = [
    `cluster-test time by file (${rows.length} files, ${seconds(total).trim()} in all), slowest first:`
  ]
  for (const r of sorted.slice(0, top))
    out.push(
      `  ${seconds(r.ms)}  ${String(r.tests).padStart(3)} tests${r.failed ? ` (${r.failed} failed)` : ""}  ${r.file}`
    )
  if (sorted.length > top) out.push(`  ... ${sorted.length - top} more`)
  out.push("by package:")
  for (const p of packageTimes(rows))
    out.push(`  ${seconds(p.ms)}  ${String(p.files).padStart(3)} files  ${p.pkg}`)
  return out.join("\n")
}

export const readReports = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")))

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2]
  if (!dir) {
    console.error("usage: node tools/test-times.mjs DIR [--top N]")
    process.exit(2)
  }
  const i = process.argv.indexOf("--top")
  console.log(render(fileTimes(readReports(dir)), i > 0 ? Number(process.argv[i + 1]) : 25))
}
