/**
 * The reason-code contract. Reason codes are an API: a removal, a rename, or a change of severity,
 * condition type or template parameters breaks customers and needs a major version and a CHANGELOG
 * entry; an addition needs a minor version. Pure functions, so the tests can tamper freely.
 */
import type { CatalogEntry } from "../src/types.ts"

export interface LockedEntry {
  readonly code: string
  readonly conditionType: string
  readonly severity: string
  readonly alsoEmittedAs?: string
  readonly parameters: readonly string[]
}

export interface Lock {
  readonly version: string
  readonly entries: readonly LockedEntry[]
}

export type Change =
  | { readonly kind: "removed"; readonly code: string }
  | { readonly kind: "added"; readonly code: string }
  | {
      readonly kind: "changed"
      readonly code: string
      readonly field: string
      readonly from: string
      readonly to: string
    }

export const lockEntry = (e: CatalogEntry): LockedEntry => ({
  code: e.code,
  conditionType: e.conditionType,
  severity: e.severity,
  ...(e.alsoEmittedAs ? { alsoEmittedAs: e.alsoEmittedAs.severity } : {}),
  parameters: (e.parameters ?? []).map((p) => `${p.name}:${p.type}`)
})

export const makeLock = (version: string, catalog: readonly CatalogEntry[]): Lock => ({
  version,
  entries: catalog.map(lockEntry)
})

export const diff = (lock: Lock, catalog: readonly CatalogEntry[]): Change[] => {
  const now = new Map(catalog.map((e) => [e.code, lockEntry(e)]))
  const before = new Map(lock.entries.map((e) => [e.code, e]))
  const changes: Change[] = []
  for (const [code, old] of before) {
    const cur = now.get(code)
    if (cur === undefined) {
      changes.push({ kind: "removed", code })
      continue
    }
    for (const field of ["conditionType", "severity", "alsoEmittedAs", "parameters"] as const) {
      const from = JSON.stringify(old[field] ?? null)
      const to = JSON.stringify(cur[field] ?? null)
      if (from !== to) changes.push({ kind: "changed", code, field, from, to })
    }
  }
  for (const code of now.keys()) if (!before.has(code)) changes.push({ kind: "added", code })
  return changes
}

const parseVersion = (v: string): [number, number, number] => {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v)
  if (m === null) throw new Error(`not a semantic version: "${v}"`)
  return [Number(m[1]), Number(m[2]), Number(m[3])]
}

export const describeChange = (c: Change): string =>
  c.kind === "changed" ? `${c.code}: ${c.field} changed from ${c.from} to ${c.to}` : `${c.code}: ${c.kind}`

/**
 * Problems that forbid moving the lock from `lock` to the current catalog at `version`.
 * Empty when the move is allowed.
 */
export const transitionProblems = (
  lock: Lock,
  catalog: readonly CatalogEntry[],
  version: string,
  changelog: string
): string[] => {
  const changes = diff(lock, catalog)
  const [maj, min] = parseVersion(version)
  const [lmaj, lmin] = parseVersion(lock.version)
  const breaking = changes.filter((c) => c.kind !== "added")
  const added = changes.filter((c) => c.kind === "added")
  const problems: string[] = []
  if (breaking.length > 0) {
    if (maj <= lmaj)
      problems.push(
        `breaking change(s) need a major version bump (lock ${lock.version}, package ${version}):\n  ` +
          breaking.map(describeChange).join("\n  ")
      )
    const section = changelogSection(changelog, version)
    if (section === undefined)
      problems.push(`CHANGELOG.md has no "## ${version}" section recording the breaking change(s)`)
    else
      for (const c of breaking)
        if (!section.includes(c.code))
          problems.push(`CHANGELOG.md section ${version} does not mention ${c.code}`)
  } else if (added.length > 0 && !(maj > lmaj || (maj === lmaj && min > lmin))) {
    problems.push(
      `new code(s) need a minor version bump (lock ${lock.version}, package ${version}): ${added.map((c) => c.code).join(", ")}`
    )
  }
  return problems
}

const changelogSection = (changelog: string, version: string): string | undefined => {
  const lines = changelog.split("\n")
  const start = lines.findIndex((l) =>
    new RegExp(`^##\\s+\\[?${version.replace(/\./g, "\\.")}\\]?(\\s|$)`).test(l)
  )
  if (start < 0) return undefined
  const end = lines.findIndex((l, i) => i > start && /^##\s/.test(l))
  return lines.slice(start, end < 0 ? undefined : end).join("\n")
}

/** What `check:contract` reports: the lock must match the catalog and the package version exactly. */
export const checkProblems = (
  lock: Lock,
  catalog: readonly CatalogEntry[],
  version: string,
  changelog: string
): string[] => {
  const changes = diff(lock, catalog)
  if (changes.length === 0 && lock.version === version) return []
  const problems = transitionProblems(lock, catalog, version, changelog)
  if (problems.length > 0) return problems
  if (changes.length > 0)
    return [
      `the catalog differs from api/catalog.lock.json:\n  ${changes.map(describeChange).join("\n  ")}\n` +
        "the version rules are met: run `npm run lock:update -w @nodemend/reason-codes` and commit the lock"
    ]
  return [
    `api/catalog.lock.json records version ${lock.version} but the package is ${version}: run lock:update`
  ]
}
