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

interface ReasonIndex {
  readonly exact: ReadonlyMap<string, CatalogEntry>
  readonly templates: readonly CompiledTemplate[]
}

const INTEGER_PARAMETER = "(0|[1-9][0-9]{0,9})"
const STRING_PARAMETER = "([A-Za-z0-9][A-Za-z0-9@_.:-]*)"

const parameterType = (entry: CatalogEntry, name: string) =>
  entry.parameters?.find((p) => p.name === name)?.type

// Built on first use, not at import: importing the package (or one constant of it) runs no code, so
// bundlers can drop everything a customer does not call.
let index: ReasonIndex | undefined
const reasonIndex = (): ReasonIndex => {
  if (index !== undefined) return index
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
      return parameterType(entry, name) === "integer" ? INTEGER_PARAMETER : STRING_PARAMETER
    })
    templates.push({ entry, regex: new RegExp(`^${source}$`), names })
  }
  index = { exact, templates }
  return index
}

/** Finds the catalog entry of a reason string; `undefined` when the reason is not one of ours. */
export const resolveReason = (reason: string): ResolvedReason | undefined => {
  const { exact, templates } = reasonIndex()
  const hit = exact.get(reason)
  if (hit !== undefined) return { reason, entry: hit, parameters: {}, defaultAction: hit.defaultAction }
  for (const t of templates) {
    const m = t.regex.exec(reason)
    if (m === null) continue
    const parameters: Record<string, string | number> = {}
    t.names.forEach((name, i) => {
      const raw = m[i + 1]!
      parameters[name] = parameterType(t.entry, name) === "integer" ? Number(raw) : raw
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

/** A reason split into its catalog key and parameters: `NvidiaXID79Error` -> `NvidiaXID{code}Error`, `{ code: 79 }`. */
export interface ParsedReason {
  readonly code: CatalogCode
  readonly params: Readonly<Record<string, string | number>>
}

/** Parses a condition's or Event's reason; `undefined` when it is not one of ours. */
export const parseReason = (reason: string): ParsedReason | undefined => {
  const r = resolveReason(reason)
  return r === undefined ? undefined : { code: r.entry.code as CatalogCode, params: r.parameters }
}

/**
 * Fills a template: `formatReason("NvidiaXID{code}Error", { code: 79 })` -> `NvidiaXID79Error`. Throws when a
 * parameter is missing or is not a value the template can carry, so what it returns always parses back.
 */
export const formatReason = (
  code: CatalogCode,
  params: Readonly<Record<string, string | number>> = {}
): ReasonCode => {
  const entry = (CATALOG as readonly CatalogEntry[]).find((e) => e.code === code)
  return code.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name]
    if (v === undefined) throw new Error(`formatReason: missing parameter "${name}" for ${code}`)
    const pattern = entry && parameterType(entry, name) === "integer" ? INTEGER_PARAMETER : STRING_PARAMETER
    if (!new RegExp(`^${pattern}$`).test(String(v)))
      throw new Error(`formatReason: parameter "${name}" of ${code} cannot be ${JSON.stringify(v)}`)
    return String(v)
  }) as ReasonCode
}

/** @deprecated since 1.2.0: use `formatReason`, which also checks the parameter values. */
export const formatCode = formatReason

/** Which severity a resolved reason has. */
export const severityOf = (reason: string): Severity | undefined => resolveReason(reason)?.entry.severity

/**
 * Is this reason fatal: does it set its condition False (severity `Condition`) rather than only raise an
 * Event? `NvidiaXID79Error` is, `NvidiaXID13Warning` and unknown reasons are not.
 */
export const isFatalReason = (reason: string): boolean => severityOf(reason) === "Condition"

/**
 * What the default policy does about this reason once its toleration has passed (per-XID actions included);
 * `undefined` for a reason that is not ours.
 */
export const defaultActionFor = (reason: string): RepairAction | undefined =>
  resolveReason(reason)?.defaultAction
