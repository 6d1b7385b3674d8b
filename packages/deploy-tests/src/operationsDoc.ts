/**
 * The metrics reference tables of docs/operations.md, read back so tests can hold them to the code: per row the
 * metric name, its type and its label names (the values listed in parentheses are dropped).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

export const OPERATIONS_DOC = join(REPO_ROOT, "docs", "operations.md")

export interface DocMetric {
  readonly name: string
  readonly type: string
  readonly labels: ReadonlyArray<string>
}

/** The rows of the table under the `###` heading that starts with `heading`. */
export const documentedMetrics = (
  heading: string,
  doc = readFileSync(OPERATIONS_DOC, "utf8")
): DocMetric[] => {
  const start = doc.indexOf(`### ${heading}`)
  if (start < 0) throw new Error(`no "### ${heading}" in docs/operations.md`)
  const end = doc.indexOf("\n#", start + 1)
  const section = doc.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^\| `([a-z_:]+)` \| (\w+) \|([^|]*)\|/gm)].map((m) => ({
    name: m[1]!,
    type: m[2]!,
    labels: m[3]!
      .replace(/\([^)]*\)/g, "")
      .split(",")
      .map((l) => l.trim())
      .filter((l) => l !== "")
  }))
}
