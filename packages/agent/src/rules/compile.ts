/**
 * Compiles the rules once into a matcher per source. A line is first scanned by one combined regex of
 * every rule literal of its source (the prefilter); only lines that contain a literal look up which ones
 * (indexOf) and run the regexes of the rules that require them. Benign lines cost one regex scan.
 */
import {
  type CatalogCode,
  type CatalogEntry,
  type MonitorName,
  resolveReason,
  type Severity
} from "@nodemend/reason-codes"
import { Data } from "effect"
import { requiredLiteral } from "./literal.ts"
import type { RuleOverrides, UserRule } from "./overrides.ts"
import type { LogRule, LogSourceId } from "./rule.ts"
import { LOG_RULES } from "./rules.ts"

export class InvalidRule extends Data.TaggedError("InvalidRule")<{
  readonly ruleId: string
  readonly message: string
}> {}

/** A rule ready to run: overrides applied. */
export interface CompiledRule {
  readonly id: string
  readonly index: number
  readonly code: string
  readonly pattern: RegExp
  readonly reasonOf: ((groups: Readonly<Record<string, string>>) => string) | undefined
  readonly message: string | undefined
  readonly subject: string | undefined
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
 * regexes have no RE2 guarantee, so user rules with it are refused (built-in rules are reviewed).
 */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,)/

const userRuleToLogRule = (rule: UserRule): LogRule => {
  const resolved = resolveReason(rule.reason)
  if (resolved === undefined)
    throw new InvalidRule({
      ruleId: rule.id,
      message: `reason "${rule.reason}" is not in the reason catalog`
    })
  let pattern: RegExp
  try {
    pattern = new RegExp(rule.pattern)
  } catch (e) {
    throw new InvalidRule({ ruleId: rule.id, message: `pattern does not compile: ${(e as Error).message}` })
  }
  if (NESTED_QUANTIFIER.test(rule.pattern))
    throw new InvalidRule({
      ruleId: rule.id,
      message:
        "pattern repeats a group that itself repeats (e.g. `(a+)+`), which can backtrack for minutes on one line"
    })
  const literals = rule.literals ?? [requiredLiteral(rule.pattern)].filter((l) => l !== undefined)
  if (literals.length === 0)
    throw new InvalidRule({
      ruleId: rule.id,
      message: "no literal substring can be derived from the pattern; list one or more `literals`"
    })
  const reason = rule.reason
  return {
    id: rule.id,
    sources: rule.sources as readonly LogSourceId[],
    code: resolved.entry.code as CatalogCode,
    reasonOf: () => reason,
    literals,
    pattern,
    ...(rule.message !== undefined ? { message: rule.message } : {}),
    ...(rule.subject !== undefined ? { subject: rule.subject } : {}),
    ...(rule.minOccurrences !== undefined ? { minOccurrences: rule.minOccurrences } : {}),
    ...(rule.windowSeconds !== undefined ? { windowSeconds: rule.windowSeconds } : {}),
    ...(rule.resolves === true ? { resolves: true } : {})
  }
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
 * Builds the matcher. Throws `InvalidRule` for a user rule that cannot run (unknown reason, bad regex,
 * no literal); callers that read config turn it into a config error.
 */
export const compileRules = (
  overrides: RuleOverrides = {},
  builtin: readonly LogRule[] = LOG_RULES
): LogMatcher => {
  const reasonOverrides = overrides.reasons ?? {}
  const disabledMonitors = new Set(overrides.disabledMonitors ?? [])
  const all = [...builtin, ...(overrides.extraRules ?? []).map(userRuleToLogRule)]
  const ids = new Set<string>()
  for (const rule of all) {
    if (ids.has(rule.id))
      throw new InvalidRule({ ruleId: rule.id, message: "a rule with this id already exists" })
    ids.add(rule.id)
  }
  const bySource = new Map<LogSourceId, CompiledRule[]>()
  all.forEach((rule, index) => {
    // A templated catalog key (`NvidiaXID{code}Error`) resolves through an instance of the template.
    const monitor = resolveReason(rule.code)?.entry.monitor ?? monitorOfTemplate(rule.code)
    if (monitor === undefined)
      throw new InvalidRule({ ruleId: rule.id, message: `code ${rule.code} is not in the catalog` })
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
      const reason = rule.reasonOf?.(groups) ?? rule.code
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
        severity: override?.severity ?? resolved.entry.severity,
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

const monitorOfTemplate = (code: string): MonitorName | undefined => {
  const example = code.replace(/\{\w+\}/g, "1")
  return resolveReason(example)?.entry.monitor
}
