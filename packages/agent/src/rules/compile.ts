/**
 * Compiles the rules once into a matcher per source. A line is first scanned by one combined regex of
 * every rule literal of its source (the prefilter); only lines that contain a literal look up which ones
 * (indexOf) and run the regexes of the rules that require them. Benign lines cost one regex scan.
 */
import {
  CATALOG,
  type CatalogCode,
  type CatalogEntry,
  type MonitorName,
  resolveReason,
  type Severity
} from "@nodemend/reason-codes"
import { Data } from "effect"
import { BUILTIN_RULES } from "./builtin-rules.ts"
import { RULE_DECODERS } from "./decoders.ts"
import { requiredLiteral } from "./literal.ts"
import type { RuleOverride, RuleOverrides, UserRule } from "./overrides.ts"
import type { LogRule, LogSourceId } from "./rule.ts"

export class InvalidRule extends Data.TaggedError("InvalidRule")<{
  readonly ruleId: string
  /** The rule's field at fault (`pattern`, `reason`, `reasonByGroup.group`, ...); absent for the rule as a whole. */
  readonly field?: string
  readonly message: string
}> {}

/** `invalid log rule kernel.bug, field logRuleOverrides.kernel.bug.pattern: pattern does not compile: ...` */
export const describeInvalidRule = (e: InvalidRule): string =>
  `invalid log rule ${e.ruleId}${e.field === undefined ? "" : `, field ${e.field}`}: ${e.message}`

/** What became of a rule: shipped and unchanged, shipped and changed by id, switched off by id, or the operator's own. */
export type RuleOrigin = "built-in" | "overridden" | "disabled" | "operator"

export interface EffectiveRule {
  /** The rule after its `logRuleOverrides` entry (unchanged when disabled). */
  readonly rule: UserRule
  readonly origin: RuleOrigin
  readonly builtin: boolean
  /** An overridden rule as it was before its override. */
  readonly original?: UserRule
  readonly override?: RuleOverride
}

/** A rule ready to run: overrides applied. */
export interface CompiledRule {
  readonly id: string
  readonly index: number
  readonly code: string
  readonly pattern: RegExp
  readonly reasonOf: ((groups: Readonly<Record<string, string>>) => string | undefined) | undefined
  readonly message: string | undefined
  readonly subject: string | undefined
  readonly severity: Severity | undefined
  readonly minOccurrences: number | undefined
  readonly windowSeconds: number | undefined
  readonly resolves: boolean
  /** Fires alongside the monitor's first match (an escalation of a run of the same lines). */
  readonly alongside: boolean
  /** Monitor of the catalog entry: one match per monitor and line. */
  readonly monitor: MonitorName
}

export interface RuleMatch {
  readonly rule: CompiledRule
  readonly reason: string
  readonly entry: CatalogEntry
  readonly severity: Severity
  readonly message: string
  readonly subject: string | undefined
  readonly minOccurrences: number
  readonly windowSeconds: number
  /** A clearing line: the engine emits a Resolution. */
  readonly resolves: boolean
}

interface SourceMatcher {
  readonly rules: readonly CompiledRule[]
  readonly literals: readonly string[]
  /** For each literal, the positions (in `rules`) of the rules that require it. */
  readonly rulesOfLiteral: readonly (readonly number[])[]
  readonly prefilter: RegExp
}

export interface LogMatcher {
  /** The sources that have at least one rule. */
  readonly sources: readonly LogSourceId[]
  /** Matches of one line, in rule order; at most one per monitor, plus its `alongside` escalations. */
  readonly match: (source: LogSourceId, text: string) => readonly RuleMatch[]
}

const NO_MATCHES: readonly RuleMatch[] = []
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A quantified group whose body also has a quantifier: the classic catastrophic-backtracking shape. JS
 * regexes have no RE2 guarantee, so rules with it are refused (built-in ones too: a test compiles them all).
 */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,)/

const PLACEHOLDER = /\{(\w+)\}/g

/** The catalog entry of a reason key: a catalog code or template as written, or an exact reason. */
export const catalogEntryOf = (reason: string): CatalogEntry | undefined =>
  (CATALOG as readonly CatalogEntry[]).find((e) => e.code === reason) ?? resolveReason(reason)?.entry

const placeholders = (template: string): string[] => [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!)

/**
 * The one path from rule data (built-in or the operator's) to a runnable rule. Throws `InvalidRule` naming the
 * rule and the field for a reason that is not in the catalog, a pattern that does not compile or can backtrack
 * without bound, and a pattern without a literal to screen lines with.
 */
export const toLogRule = (rule: UserRule): LogRule => {
  const invalid = (field: string, message: string) => new InvalidRule({ ruleId: rule.id, field, message })
  let pattern: RegExp
  try {
    pattern = new RegExp(rule.pattern)
  } catch (e) {
    throw invalid("pattern", `pattern does not compile: ${(e as Error).message}`)
  }
  if (NESTED_QUANTIFIER.test(rule.pattern))
    throw invalid(
      "pattern",
      "pattern repeats a group that itself repeats (e.g. `(a+)+`), which can backtrack for minutes on one line"
    )
  const groupNames = new Set([...rule.pattern.matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)].map((m) => m[1]!))
  const checkReason = (reason: string, field: string): CatalogEntry => {
    const entry = catalogEntryOf(reason)
    if (entry === undefined) throw invalid(field, `reason "${reason}" is not in the reason catalog`)
    for (const name of placeholders(reason))
      if (!groupNames.has(name))
        throw invalid(field, `reason "${reason}" needs a named group (?<${name}>...) in the pattern`)
    return entry
  }
  const entry = checkReason(rule.reason, "reason")
  const byGroup = rule.reasonByGroup
  if (byGroup !== undefined) {
    if (!groupNames.has(byGroup.group))
      throw invalid("reasonByGroup.group", `the pattern has no named group (?<${byGroup.group}>...)`)
    for (const [value, reason] of Object.entries(byGroup.reasons)) {
      const other = checkReason(reason, `reasonByGroup.reasons.${value}`)
      if (other.monitor !== entry.monitor)
        throw invalid(
          `reasonByGroup.reasons.${value}`,
          `reason "${reason}" belongs to monitor ${other.monitor}, the rule's reason "${rule.reason}" to ${entry.monitor}`
        )
    }
  }
  const literals = rule.literals ?? [requiredLiteral(rule.pattern)].filter((l) => l !== undefined)
  if (literals.length === 0)
    throw invalid(
      "literals",
      "no literal substring can be derived from the pattern; list one or more `literals`"
    )
  const reason = rule.reason
  const templated = reason.includes("{")
  const reasonOf =
    byGroup !== undefined
      ? (groups: Readonly<Record<string, string>>) => {
          const value = groups[byGroup.group] ?? ""
          // Own keys only: a line's `constructor` must not find Object.prototype's.
          const r = Object.hasOwn(byGroup.reasons, value) ? byGroup.reasons[value]! : reason
          return r.includes("{") ? fillStrict(r, groups) : r
        }
      : templated
        ? (groups: Readonly<Record<string, string>>) => fillStrict(reason, groups)
        : reason === entry.code
          ? undefined
          : () => reason
  const decoded = decodedReasonOf(rule, groupNames, reasonOf ?? (() => reason), invalid)
  return {
    id: rule.id,
    sources: rule.sources as readonly LogSourceId[],
    code: entry.code as CatalogCode,
    ...(decoded !== undefined ? { reasonOf: decoded } : reasonOf !== undefined ? { reasonOf } : {}),
    literals,
    pattern,
    ...(rule.message !== undefined ? { message: rule.message } : {}),
    ...(rule.subject !== undefined ? { subject: rule.subject } : {}),
    ...(rule.severity !== undefined ? { severity: rule.severity } : {}),
    ...(rule.minOccurrences !== undefined ? { minOccurrences: rule.minOccurrences } : {}),
    ...(rule.windowSeconds !== undefined ? { windowSeconds: rule.windowSeconds } : {}),
    ...(rule.resolves === true ? { resolves: true } : {}),
    ...(rule.alongside === true ? { alongside: true } : {})
  }
}

/** A rule's reason behind its decoder (rules/decoders.ts): none unless the decoder fires; undefined without one. */
const decodedReasonOf = (
  rule: UserRule,
  groupNames: ReadonlySet<string>,
  reasonOf: (groups: Readonly<Record<string, string>>) => string | undefined,
  invalid: (field: string, message: string) => InvalidRule
): ((groups: Readonly<Record<string, string>>) => string | undefined) | undefined => {
  if (rule.decoder === undefined) return undefined
  const decoder = Object.hasOwn(RULE_DECODERS, rule.decoder) ? RULE_DECODERS[rule.decoder] : undefined
  if (decoder === undefined)
    throw invalid("decoder", `no decoder "${rule.decoder}" (known: ${Object.keys(RULE_DECODERS).join(", ")})`)
  const missing = decoder.groups.find((g) => !groupNames.has(g))
  if (missing !== undefined)
    throw invalid(
      "decoder",
      `decoder "${rule.decoder}" needs a named group (?<${missing}>...) in the pattern`
    )
  return (groups) => (decoder.fires(groups) ? reasonOf(groups) : undefined)
}

const applyOverride = (rule: UserRule, o: RuleOverride): UserRule => {
  const { disabled: _, ...fields } = o
  const merged: Record<string, unknown> = { ...rule, ...fields }
  // A new pattern brings its own literal unless the override lists some.
  if (o.pattern !== undefined && o.literals === undefined) delete merged.literals
  // The rule's fixtures were written for its old pattern.
  if (o.pattern !== undefined) delete merged.fixtures
  return merged as UserRule
}

/** Where invalid operator input goes when it should not stop the other rules (the running agent logs it). */
export type OnInvalidRule = (error: InvalidRule) => void

const raise: OnInvalidRule = (e) => {
  throw e
}

/**
 * Every rule after the operator's changes, in matching order: the built-ins (changed or disabled by id through
 * `rules`), then the operator's `extraRules`. A duplicate id or an override naming no rule is an `InvalidRule`:
 * thrown, or with `onInvalid` reported and left out (the duplicate rule, the override), the rest kept.
 */
export const effectiveRules = (
  overrides: RuleOverrides = {},
  builtin: readonly UserRule[] = BUILTIN_RULES,
  onInvalid: OnInvalidRule = raise
): readonly EffectiveRule[] => {
  const byId = overrides.rules ?? {}
  const ids = new Set<string>()
  const out: EffectiveRule[] = []
  const add = (rule: UserRule, isBuiltin: boolean) => {
    if (ids.has(rule.id)) {
      onInvalid(
        new InvalidRule({ ruleId: rule.id, field: "id", message: "a rule with this id already exists" })
      )
      return
    }
    ids.add(rule.id)
    const o = byId[rule.id]
    const own: RuleOrigin = isBuiltin ? "built-in" : "operator"
    if (o === undefined) out.push({ rule, origin: own, builtin: isBuiltin })
    else if (o.disabled === true) out.push({ rule, origin: "disabled", builtin: isBuiltin })
    else
      out.push({
        rule: applyOverride(rule, o),
        origin: isBuiltin ? "overridden" : own,
        builtin: isBuiltin,
        original: rule,
        override: o
      })
  }
  for (const rule of builtin) add(rule, true)
  for (const rule of overrides.extraRules ?? []) add(rule, false)
  for (const id of Object.keys(byId))
    if (!ids.has(id))
      onInvalid(
        new InvalidRule({
          ruleId: id,
          field: `logRuleOverrides.${id}`,
          message: "no built-in or operator rule has this id (`nodemend-agent rules list` lists them)"
        })
      )
  return out
}

/**
 * The rules to compile. An overridden rule that does not compile names the override's field and, with
 * `onInvalid`, runs as it was before the override; an operator rule that does not compile is left out.
 */
const runnableRules = (
  overrides: RuleOverrides,
  builtin: readonly UserRule[],
  onInvalid: OnInvalidRule
): LogRule[] => {
  const out: LogRule[] = []
  for (const r of effectiveRules(overrides, builtin, onInvalid)) {
    if (r.origin === "disabled") continue
    try {
      out.push(toLogRule(r.rule))
    } catch (e) {
      if (!(e instanceof InvalidRule)) throw e
      // An overridden rule compiled before its override: the override's field is at fault.
      const error =
        r.override === undefined
          ? e
          : new InvalidRule({
              ruleId: e.ruleId,
              field: `logRuleOverrides.${r.rule.id}${e.field === undefined ? "" : `.${e.field}`}`,
              message: e.message
            })
      onInvalid(error)
      // Not reached when onInvalid throws. The rule as it was keeps running (a built-in always compiles).
      if (r.original !== undefined) out.push(toLogRule(r.original))
    }
  }
  return out
}

/** Fills `{name}` placeholders; `undefined` when a placeholder has no value (for subjects). */
const fillStrict = (
  template: string,
  values: Readonly<Record<string, string | undefined>>
): string | undefined => {
  let missing = false
  const out = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = values[name]
    if (v === undefined || v === "") missing = true
    return v ?? ""
  })
  return missing ? undefined : out
}

const fill = (template: string, values: Readonly<Record<string, string | undefined>>): string =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole)

/**
 * Builds the matcher from the built-in rules and the operator's changes. A rule or override that cannot run
 * (unknown reason, bad regex, no literal, unknown id) is an `InvalidRule` naming the rule and the field: thrown
 * (`rules check`, tests), or given to `onInvalid` and left out while every other rule runs (the agent).
 */
export const compileRules = (
  overrides: RuleOverrides = {},
  builtin: readonly UserRule[] = BUILTIN_RULES,
  onInvalid: OnInvalidRule = raise
): LogMatcher => {
  const reasonOverrides = overrides.reasons ?? {}
  const disabledMonitors = new Set(overrides.disabledMonitors ?? [])
  const all = runnableRules(overrides, builtin, onInvalid)
  const bySource = new Map<LogSourceId, CompiledRule[]>()
  all.forEach((rule, index) => {
    const monitor = catalogEntryOf(rule.code)!.monitor
    if (disabledMonitors.has(monitor)) return
    if (rule.reasonOf === undefined && reasonOverrides[rule.code]?.disabled === true) return
    const compiled: CompiledRule = {
      id: rule.id,
      index,
      code: rule.code,
      pattern: rule.pattern,
      reasonOf: rule.reasonOf,
      message: rule.message,
      subject: rule.subject,
      severity: rule.severity,
      minOccurrences: rule.minOccurrences,
      windowSeconds: rule.windowSeconds,
      resolves: rule.resolves === true,
      alongside: rule.alongside === true,
      monitor
    }
    for (const source of rule.sources) {
      const list = bySource.get(source) ?? []
      list.push(compiled)
      bySource.set(source, list)
    }
  })

  const matchers = new Map<LogSourceId, SourceMatcher>()
  for (const [source, rules] of bySource) {
    const literals: string[] = []
    const rulesOfLiteral: number[][] = []
    rules.forEach((rule, position) => {
      for (const literal of all[rule.index]!.literals) {
        let k = literals.indexOf(literal)
        if (k < 0) {
          k = literals.push(literal) - 1
          rulesOfLiteral.push([])
        }
        rulesOfLiteral[k]!.push(position)
      }
    })
    const prefilter = new RegExp(literals.map(escapeRegex).join("|"))
    matchers.set(source, { rules, literals, rulesOfLiteral, prefilter })
  }

  const match = (source: LogSourceId, text: string): readonly RuleMatch[] => {
    const m = matchers.get(source)
    if (m === undefined || !m.prefilter.test(text)) return NO_MATCHES
    const candidate = new Uint8Array(m.rules.length)
    for (let k = 0; k < m.literals.length; k++) {
      if (text.indexOf(m.literals[k]!) !== -1) for (const p of m.rulesOfLiteral[k]!) candidate[p] = 1
    }
    const out: RuleMatch[] = []
    const monitorsHit: MonitorName[] = []
    for (let p = 0; p < m.rules.length; p++) {
      if (candidate[p] === 0) continue
      const rule = m.rules[p]!
      if (!rule.alongside && monitorsHit.includes(rule.monitor)) continue
      const result = rule.pattern.exec(text)
      if (result === null) continue
      const groups: Record<string, string> = {}
      for (const [k, v] of Object.entries(result.groups ?? {})) if (v !== undefined) groups[k] = v
      const reason = rule.reasonOf === undefined ? rule.code : rule.reasonOf(groups)
      if (reason === undefined) continue
      const resolved = resolveReason(reason)
      if (resolved === undefined) continue
      // The exact reason wins over its catalog template key (`NvidiaXID79Error` over `NvidiaXID{code}Error`).
      const override = reasonOverrides[reason] ?? reasonOverrides[resolved.entry.code]
      if (override?.disabled === true) continue
      const values = { ...groups, line: text, ...stringParams(resolved.parameters) }
      if (!rule.alongside) monitorsHit.push(rule.monitor)
      out.push({
        rule,
        reason,
        entry: resolved.entry,
        severity: override?.severity ?? rule.severity ?? resolved.entry.severity,
        message: fill(rule.message ?? resolved.entry.message, values),
        subject: rule.subject === undefined ? undefined : fillStrict(rule.subject, values),
        minOccurrences: override?.minOccurrences ?? rule.minOccurrences ?? 1,
        windowSeconds: override?.windowSeconds ?? rule.windowSeconds ?? 0,
        resolves: rule.resolves
      })
    }
    return out.length === 0 ? NO_MATCHES : out
  }

  return { sources: [...matchers.keys()], match }
}

const stringParams = (p: Readonly<Record<string, string | number>>): Record<string, string> =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, String(v)]))
