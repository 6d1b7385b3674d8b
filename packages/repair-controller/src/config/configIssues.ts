/**
 * Turns a Schema issue tree into one line per problem, each naming the field path as a user writes it
 * (`aws.subnets[0].zoneId`). An unknown key says which known key was probably meant.
 */
import { SchemaIssue } from "effect"

export interface ConfigProblem {
  /** The offending field, `""` for the whole file. */
  readonly field: string
  readonly message: string
}

const IDENTIFIER = /^[A-Za-z_$][\w${}-]*$/u

/** `drain.deadlineSeconds`, `policies[0].status`, `pools["gpu.h100"]`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((k, i) =>
      typeof k === "number"
        ? `[${k}]`
        : IDENTIFIER.test(String(k))
          ? `${i === 0 ? "" : "."}${String(k)}`
          : `[${JSON.stringify(String(k))}]`
    )
    .join("")

/** Edit distance counting a swap of two neighbours as one edit (`regoin` -> `region`). */
const editDistance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

/** A key with its unit suffix dropped: `deadlineMs` and `deadlineSeconds` share the stem `deadline`. */
const stem = (key: string): string =>
  key.toLowerCase().replace(/(?:seconds|second|secs|sec|millis|ms|s)$/u, "")

/** The known key `key` was most likely meant to be: same letters but case, same stem but unit, or a close typo. */
export const closestKey = (key: string, known: ReadonlyArray<string>): string | undefined => {
  const lower = key.toLowerCase()
  const sameLetters = known.find((k) => k.toLowerCase() === lower)
  if (sameLetters !== undefined) return sameLetters
  const sameStem = known.find((k) => stem(k) === stem(key) && stem(k).length > 0)
  if (sameStem !== undefined) return sameStem
  const scored = known
    .map((k) => ({ k, d: editDistance(lower, k.toLowerCase()) }))
    .filter(({ k, d }) => d <= Math.max(1, Math.floor(Math.min(k.length, key.length) / 4)))
    .sort((x, y) => x.d - y.d)
  return scored[0]?.k
}

const unknownKeyMessage = (issue: SchemaIssue.UnexpectedKey, key: PropertyKey | undefined): string => {
  const known = issue.ast._tag === "Objects" ? issue.ast.propertySignatures.map((p) => String(p.name)) : []
  const guess = typeof key === "string" ? closestKey(key, known) : undefined
  if (guess !== undefined) return `unknown key (did you mean ${guess}?)`
  return known.length > 0 ? `unknown key (known keys: ${known.join(", ")})` : "unknown key"
}

/** A filter that returned a whole issue tree (the `aws:` section) is walked like any other part of the file. */
const isTree = (issue: SchemaIssue.Issue): boolean => issue._tag === "Composite" || issue._tag === "Pointer"

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<ConfigProblem> => {
  switch (issue._tag) {
    case "Pointer":
      return walk(issue.issue, [...path, ...issue.path])
    case "Composite":
      return issue.issues.flatMap((i) => walk(i, path))
    case "Encoding":
      return walk(issue.issue, path)
    case "AnyOf":
      // A key with a default is `T | undefined`: its only failing member is the one to report.
      if (issue.issues.length > 0) return issue.issues.flatMap((i) => walk(i, path))
      break
    case "UnexpectedKey":
      return [{ field: formatPath(path), message: unknownKeyMessage(issue, path.at(-1)) }]
    case "Filter":
      if (isTree(issue.issue)) return walk(issue.issue, path)
      break
  }
  // Everything else keeps Schema's own wording ("Expected a value greater than or equal to 0", "Missing key").
  return standard(issue).issues.map((i) => ({
    field: formatPath([...path, ...(i.path ?? []).map((p) => (typeof p === "object" ? p.key : p))]),
    message: i.message
  }))
}

/** Every problem in `issue`, in the order Schema found them; `at` is where the decoded part sits in the file. */
export const configProblems = (
  issue: SchemaIssue.Issue,
  at: ReadonlyArray<PropertyKey> = []
): ReadonlyArray<ConfigProblem> => walk(issue, at)
