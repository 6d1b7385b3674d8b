import { CATALOG, FATAL_XIDS } from "./catalog.ts"
import type { CatalogEntry, ConditionType, RepairAction, Severity } from "./types.ts"

type Catalog = typeof CATALOG

/** A catalog key: the code or template exactly as written in the catalog. */
export type CatalogCode = Catalog[number]["code"]

type Expand<S extends string> = S extends `${infer A}{unit}${infer B}`
  ? `${A}${string}${B}`
  : S extends `${infer A}{${string}}${infer B}`
    ? `${A}${number}${B}`
    : S

/** Every reason string nodemend can emit, with templates expanded (`NvidiaXID${number}Error`, ...). */
export type ReasonCode = Expand<CatalogCode>

/** A reason code resolved against the catalog. */
export interface ResolvedReason {
  readonly reason: string
  readonly entry: CatalogEntry
  /** Template parameters, e.g. `{ code: 79 }` for `NvidiaXID79Error`. */
  readonly parameters: Readonly<Record<string, string | number>>
  /** The default action, refined by the parameters (per-XID actions). */
  readonly defaultAction: RepairAction
}

interface CompiledTemplate {
  readonly entry: CatalogEntry
  readonly regex: RegExp
  readonly names: readonly string[]
}

const exact = new Map<string, CatalogEntry>()
const templates: CompiledTemplate[] = []
for (const entry of CATALOG as readonly CatalogEntry[]) {
  if (!entry.code.includes("{")) {
    exact.set(entry.code, entry)
    continue
  }
  const names: string[] = []
  const source = entry.code.replace(/\{(\w+)\}|[^{]+/g, (part, name: string | undefined) => {
    if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    names.push(name)
    const type = entry.parameters?.find((p) => p.name === name)?.type
    return type === "integer" ? "(0|[1-9][0-9]{0,9})" : "([A-Za-z0-9][A-Za-z0-9@_.:-]*)"
  })
  templates.push({ entry, regex: new RegExp(`^${source}$`), names })
}

/** Finds the catalog entry of a reason string; `undefined` when the reason is not one of ours. */
export const resolveReason = (reason: string): ResolvedReason | undefined => {
  const hit = exact.get(reason)
  if (hit !== undefined) return { reason, entry: hit, parameters: {}, defaultAction: hit.defaultAction }
  for (const t of templates) {
    const m = t.regex.exec(reason)
    if (m === null) continue
    const parameters: Record<string, string | number> = {}
    t.names.forEach((name, i) => {
      const raw = m[i + 1]!
      const type = t.entry.parameters?.find((p) => p.name === name)?.type
      parameters[name] = type === "integer" ? Number(raw) : raw
    })
    return { reason, entry: t.entry, parameters, defaultAction: actionFor(t.entry, parameters) }
  }
  return undefined
}

const actionFor = (entry: CatalogEntry, parameters: Record<string, string | number>): RepairAction => {
  if (entry.code === "NvidiaXID{code}Error") {
    const xid = parameters.code
    return typeof xid === "number" ? (FATAL_XIDS[xid] ?? entry.defaultAction) : entry.defaultAction
  }
  return entry.defaultAction
}

export const isReasonCode = (reason: string): reason is ReasonCode => resolveReason(reason) !== undefined

/** The catalog entry for a catalog key (`NvidiaXID{code}Error`, `SoftLockup`, ...). */
export const entryForCode = (code: CatalogCode): CatalogEntry =>
  (CATALOG as readonly CatalogEntry[]).find((e) => e.code === code)!

export const entriesFor = (conditionType: ConditionType): readonly CatalogEntry[] =>
  (CATALOG as readonly CatalogEntry[]).filter((e) => e.conditionType === conditionType)

/** Is this XID on the fatal list (emitted as `NvidiaXID{n}Error`)? */
export const isFatalXid = (xid: number): boolean => Object.hasOwn(FATAL_XIDS, xid)

/** The reason string for an XID: `NvidiaXID79Error` or `NvidiaXID13Warning`. */
export const xidReason = (xid: number): ReasonCode =>
  (isFatalXid(xid) ? `NvidiaXID${xid}Error` : `NvidiaXID${xid}Warning`) as ReasonCode

/** Fills a template: `formatCode("NvidiaXID{code}Error", { code: 79 })` -> `NvidiaXID79Error`. */
export const formatCode = (
  code: CatalogCode,
  parameters: Readonly<Record<string, string | number>> = {}
): string =>
  code.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = parameters[name]
    if (v === undefined) throw new Error(`formatCode: missing parameter "${name}" for ${code}`)
    return String(v)
  })

/** Which severity a resolved reason has. */
export const severityOf = (reason: string): Severity | undefined => resolveReason(reason)?.entry.severity
