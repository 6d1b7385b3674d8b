/**
 * The reason-code contract: everything a customer can branch on, as recorded in api/catalog.lock.json, and
 * the version rules for changing it. A removal, a rename, or a change of what a recorded item says is
 * breaking (major version + a CHANGELOG section naming it); an addition needs a minor version (+ a CHANGELOG
 * section naming it). Adding an XID to the fatal list or changing a default policy is breaking: it changes
 * what an existing reason means or what the controller does by default. Pure functions, so tests can tamper.
 */
import type { KeyInfo } from "../src/keys.ts"
import type { CatalogEntry, ConditionTypeInfo, RepairPolicy } from "../src/types.ts"

/** What the contract is made from: the package's sources, or a tampered copy of them in a test. */
export interface ContractSources {
  readonly catalog: readonly CatalogEntry[]
  readonly conditionTypes: readonly ConditionTypeInfo[]
  readonly neuronReady: { readonly readyReason: string; readonly readyMessage: string }
  readonly fatalXids: Readonly<Record<number, string>>
  readonly defaultRepairPolicies: readonly RepairPolicy[]
  readonly neverRepairConditionTypes: readonly string[]
  readonly keys: readonly KeyInfo[]
}

export interface LockedEntry {
  readonly code: string
  readonly conditionType: string
  readonly severity: string
  readonly alsoEmittedAs?: string
  /** `name:type` of each parameter of a templated code. */
  readonly parameters: readonly string[]
  readonly message?: string
  /** The `{placeholders}` of the message, in order. */
  readonly messageParameters?: readonly string[]
  readonly recovery?: string
  readonly defaultAction?: string
}

export interface LockedReadyReason {
  readonly conditionType: string
  readonly reason: string
  readonly message: string
}

export interface LockedKey {
  readonly key: string
  readonly kind: string
  readonly effect?: string
}

/**
 * The lock. Sections other than `entries` were added in 1.2.0; a lock from before has only `version` and
 * `entries` (without messages, recovery or actions), and a released lock is compared on what it records.
 */
export interface Lock {
  readonly version: string
  readonly conditionTypes?: readonly string[]
  readonly readyReasons?: readonly LockedReadyReason[]
  readonly entries: readonly LockedEntry[]
  /** XID -> default action; these XIDs are emitted as `NvidiaXID{code}Error`, all others as `...Warning`. */
  readonly fatalXids?: Readonly<Record<string, string>>
  readonly defaultRepairPolicies?: readonly RepairPolicy[]
  readonly neverRepairConditionTypes?: readonly string[]
  readonly keys?: readonly LockedKey[]
}

export interface Change {
  readonly kind: "added" | "removed" | "changed"
  /** What changed, in the words a CHANGELOG uses: a reason code, a condition type, a key, `NvidiaXID79Error`. */
  readonly subject: string
  readonly section: string
  readonly breaking: boolean
  readonly field?: string
  readonly from?: string
  readonly to?: string
}

const placeholders = (template: string): string[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)

export const lockEntry = (e: CatalogEntry): LockedEntry => ({
  code: e.code,
  conditionType: e.conditionType,
  severity: e.severity,
  ...(e.alsoEmittedAs ? { alsoEmittedAs: e.alsoEmittedAs.severity } : {}),
  parameters: (e.parameters ?? []).map((p) => `${p.name}:${p.type}`),
  message: e.message,
  messageParameters: placeholders(e.message),
  recovery: e.recovery,
  defaultAction: e.defaultAction
})

export const makeLock = (version: string, s: ContractSources): Lock => ({
  version,
  conditionTypes: s.conditionTypes.map((c) => c.type),
  readyReasons: [
    ...s.conditionTypes.map((c) => ({
      conditionType: c.type,
      reason: c.readyReason,
      message: c.readyMessage
    })),
    {
      conditionType: "AcceleratedHardwareReady",
      reason: s.neuronReady.readyReason,
      message: s.neuronReady.readyMessage
    }
  ],
  entries: s.catalog.map(lockEntry),
  fatalXids: Object.fromEntries(Object.entries(s.fatalXids).map(([xid, action]) => [xid, action])),
  defaultRepairPolicies: s.defaultRepairPolicies.map((p) => ({
    conditionType: p.conditionType,
    status: p.status,
    tolerationSeconds: p.tolerationSeconds
  })),
  neverRepairConditionTypes: [...s.neverRepairConditionTypes],
  keys: s.keys.map((k) => ({
    key: k.key,
    kind: k.kind,
    ...(k.effect === undefined ? {} : { effect: k.effect })
  }))
})

/** Entry fields that locks before 1.2.0 did not record: such a lock says nothing about them. */
const RECORDED_SINCE_1_2 = new Set(["message", "messageParameters", "recovery", "defaultAction"])

/** Compares two keyed lists of recorded items. */
const diffSection = <T extends object>(
  section: string,
  before: readonly T[] | undefined,
  after: readonly T[] | undefined,
  keyOf: (t: T) => string,
  rules: { readonly additionBreaks: boolean; readonly subject?: (key: string) => string }
): Change[] => {
  if (before === undefined) return []
  const subject = rules.subject ?? ((k: string) => k)
  const now = new Map((after ?? []).map((t) => [keyOf(t), t]))
  const old = new Map(before.map((t) => [keyOf(t), t]))
  const changes: Change[] = []
  for (const [key, was] of old) {
    const cur = now.get(key)
    if (cur === undefined) {
      changes.push({ kind: "removed", subject: subject(key), section, breaking: true })
      continue
    }
    const fields = new Set([...Object.keys(was), ...Object.keys(cur)])
    for (const field of fields) {
      if (!(field in was) && RECORDED_SINCE_1_2.has(field)) continue
      const from = JSON.stringify((was as Record<string, unknown>)[field] ?? null)
      const to = JSON.stringify((cur as Record<string, unknown>)[field] ?? null)
      if (from !== to)
        changes.push({ kind: "changed", subject: subject(key), section, breaking: true, field, from, to })
    }
  }
  for (const key of now.keys())
    if (!old.has(key))
      changes.push({ kind: "added", subject: subject(key), section, breaking: rules.additionBreaks })
  return changes
}

const asItems = (xs: readonly string[] | undefined) => xs?.map((x) => ({ name: x }))
const xidItems = (m: Readonly<Record<string, string>> | undefined) =>
  m === undefined ? undefined : Object.entries(m).map(([xid, defaultAction]) => ({ xid, defaultAction }))

/** Every difference between a recorded contract and a newer one. */
export const diff = (before: Lock, after: Lock): Change[] => [
  ...diffSection(
    "condition types",
    asItems(before.conditionTypes),
    asItems(after.conditionTypes),
    (c) => c.name,
    {
      additionBreaks: false
    }
  ),
  ...diffSection("ready reasons", before.readyReasons, after.readyReasons, (r) => r.reason, {
    additionBreaks: false
  }),
  ...diffSection("reason codes", before.entries, after.entries, (e) => e.code, { additionBreaks: false }),
  ...diffSection("fatal XIDs", xidItems(before.fatalXids), xidItems(after.fatalXids), (x) => x.xid, {
    additionBreaks: true,
    subject: (xid) => `NvidiaXID${xid}Error`
  }),
  ...diffSection(
    "default repair policies",
    before.defaultRepairPolicies,
    after.defaultRepairPolicies,
    (p) => `${p.conditionType}=${p.status}`,
    { additionBreaks: true }
  ),
  ...diffSection(
    "never-repair condition types",
    asItems(before.neverRepairConditionTypes),
    asItems(after.neverRepairConditionTypes),
    (c) => c.name,
    { additionBreaks: true }
  ),
  ...diffSection("keys", before.keys, after.keys, (k) => k.key, { additionBreaks: false })
]

export const parseVersion = (v: string): [number, number, number] => {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v)
  if (m === null) throw new Error(`not a semantic version: "${v}"`)
  return [Number(m[1]), Number(m[2]), Number(m[3])]
}

export const compareVersions = (a: string, b: string): number => {
  const [x, y] = [parseVersion(a), parseVersion(b)]
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}

export const describeChange = (c: Change): string =>
  c.kind === "changed"
    ? `${c.subject} (${c.section}): ${c.field} changed from ${c.from} to ${c.to}`
    : `${c.subject} (${c.section}): ${c.kind}`

/** The `## <version>` section of the CHANGELOG, or undefined. */
export const changelogSection = (changelog: string, version: string): string | undefined => {
  const lines = changelog.split("\n")
  const start = lines.findIndex((l) =>
    new RegExp(`^##\\s+\\[?${version.replace(/\./g, "\\.")}\\]?(\\s|$)`).test(l)
  )
  if (start < 0) return undefined
  const end = lines.findIndex((l, i) => i > start && /^##\s/.test(l))
  return lines.slice(start, end < 0 ? undefined : end).join("\n")
}

/**
 * Problems that forbid going from the `released` contract to `current` (whose version is the package's).
 * `releasedFrom` says where the released contract came from, for the messages. Empty when allowed.
 */
export const transitionProblems = (
  released: Lock,
  current: Lock,
  changelog: string,
  releasedFrom = "the released contract"
): string[] => {
  const changes = diff(released, current)
  const [maj, min] = parseVersion(current.version)
  const [rmaj, rmin] = parseVersion(released.version)
  const breaking = changes.filter((c) => c.breaking)
  const added = changes.filter((c) => !c.breaking)
  const problems: string[] = []
  const base = `${releasedFrom} is ${released.version}, the package is ${current.version}`
  if (compareVersions(current.version, released.version) < 0)
    problems.push(`the version went backwards (${base})`)
  if (breaking.length > 0 && maj <= rmaj)
    problems.push(
      `breaking change(s) need a major version bump (${base}):\n  ${breaking.map(describeChange).join("\n  ")}`
    )
  else if (added.length > 0 && !(maj > rmaj || (maj === rmaj && min > rmin)))
    problems.push(
      `addition(s) need a minor version bump (${base}):\n  ${added.map(describeChange).join("\n  ")}`
    )
  if (changes.length > 0) {
    const section = changelogSection(changelog, current.version)
    if (section === undefined)
      problems.push(`CHANGELOG.md has no "## ${current.version}" section recording the contract change(s)`)
    else
      for (const subject of new Set(changes.map((c) => c.subject)))
        if (!section.includes(subject))
          problems.push(`CHANGELOG.md section ${current.version} does not mention ${subject}`)
  }
  return problems
}

const canonical = (l: Lock) => JSON.stringify(l)

/**
 * What `check:contract` reports: the change from the released contract must follow the version rules, and
 * the committed lock must be exactly the current contract at the package's version.
 */
export const checkProblems = (opts: {
  readonly committed: Lock
  readonly current: Lock
  readonly released: { readonly lock: Lock; readonly from: string } | undefined
  readonly changelog: string
}): string[] => {
  const problems =
    opts.released === undefined
      ? []
      : transitionProblems(opts.released.lock, opts.current, opts.changelog, opts.released.from)
  if (canonical(opts.committed) !== canonical(opts.current)) {
    const changes = diff(opts.committed, opts.current)
    problems.push(
      "api/catalog.lock.json is not the current contract" +
        (changes.length > 0
          ? `:\n  ${changes.map(describeChange).join("\n  ")}\n`
          : ` (version or layout). `) +
        "Once the version rules are met, run `npm run lock:update -w @nodemend/reason-codes` and commit the lock"
    )
  }
  return problems
}
