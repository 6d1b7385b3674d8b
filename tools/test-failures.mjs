// What failed in a test run, printed last by `npm test` so that the tail of its output (all a CI page shows) names
// each failed test with the start of its error, and each failed task without a vitest report (a script such as the
// demo's scenario) with the end of its log.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { REPO_ROOT } from "./cluster/versions.mjs"

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what this strips.
const ANSI = /\u001b\[[0-9;]*m/g
const plain = (s) => String(s).replace(ANSI, "")

/** Failed tests ({ file, name, message }) from vitest JSON reports; message: the first `lines` lines of the first failure. */
export const failedTests = (reports, lines = 6) =>
  reports.flatMap((r) =>
    (r.testResults ?? []).flatMap((t) => {
      const file = relative(REPO_ROOT, t.name)
      const failed = (t.assertionResults ?? []).filter((a) => a.status === "failed")
      const rows = failed.map((a) => ({
        file,
        name: a.fullName ?? a.title ?? "",
        message: head(a.failureMessages?.[0] ?? "", lines)
      }))
      // A file that failed outside any test (a hook, an import): vitest puts the error on the file.
      if (rows.length === 0 && t.status === "failed")
        rows.push({ file, name: "(the file itself)", message: head(t.message ?? "", lines) })
      return rows
    })
  )

const head = (text, lines) =>
  plain(text)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, lines)
    .join("\n")

/** Failed tasks ({ taskId, package, task, directory }) from a turbo run summary (`--summarize`). */
export const failedTasks = (summary) =>
  (summary.tasks ?? [])
    .filter((t) => (t.execution?.exitCode ?? 0) !== 0)
    .map((t) => ({ taskId: t.taskId, package: t.package, task: t.task, directory: t.directory }))

/** The newest turbo run summary written at or after `since` (ms), or undefined. */
export const latestSummary = (since) => {
  const dir = join(REPO_ROOT, ".turbo", "runs")
  if (!existsSync(dir)) return undefined
  const newest = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({ path: join(dir, f), mtime: statSync(join(dir, f)).mtimeMs }))
    .filter((f) => f.mtime >= since)
    .sort((a, b) => b.mtime - a.mtime)[0]
  return newest && JSON.parse(readFileSync(newest.path, "utf8"))
}

/**
 * What a failed task's log says: its first error (vitest's "Unhandled Error" block or the first `Error:` line, with
 * the `errorLines` after it: a globalSetup's error sits above a long stack, out of reach of the tail), then the
 * last `lines` lines. Pure on the log's text; `taskLogTail` reads the log.
 */
export const logExcerpt = (text, lines = 15, errorLines = 8) => {
  const all = plain(text)
    .split("\n")
    .filter((l) => l.trim() !== "")
  const tailStart = Math.max(0, all.length - lines)
  const errorAt = (re) => all.findIndex((l) => re.test(l))
  const found = errorAt(/^\s*(\w*Error|FAIL)\b|Error: /)
  const first = found >= 0 ? found : errorAt(/Unhandled Error/)
  if (first < 0 || first >= tailStart) return all.slice(tailStart).join("\n")
  const error = all.slice(first, Math.min(first + 1 + errorLines, tailStart))
  return [...error, ...(first + 1 + errorLines < tailStart ? ["..."] : []), ...all.slice(tailStart)].join(
    "\n"
  )
}

/** `logExcerpt` of a task's log: `task.log`, or turbo's (`<package>/.turbo/turbo-<task>.log`). */
export const taskLogTail = (task, lines = 15) => {
  const log =
    task.log ?? join(REPO_ROOT, task.directory, ".turbo", `turbo-${task.task.replaceAll(":", "$colon$")}.log`)
  if (!existsSync(log)) return `(no log at ${relative(REPO_ROOT, log)})`
  return logExcerpt(readFileSync(log, "utf8"), lines)
}

/** The summary: each failed test, then each failed task whose package has no failed test in the reports. */
export const renderFailures = (tests, tasks, tail = taskLogTail) => {
  const out = []
  if (tests.length > 0) {
    out.push(`failed tests (${tests.length}):`)
    for (const t of tests) {
      out.push(`  ${t.file} > ${t.name}`)
      for (const l of t.message.split("\n")) if (l !== "") out.push(`      ${l}`)
    }
  }
  const explained = new Set(tests.map((t) => t.file.split("/").slice(0, 2).join("/")))
  for (const task of tasks.filter((t) => !explained.has(t.directory)))
    out.push(
      `failed task ${task.taskId}, its first error and the end of its log:`,
      ...tail(task)
        .split("\n")
        .map((l) => `  | ${l}`)
    )
  return out.join("\n")
}
