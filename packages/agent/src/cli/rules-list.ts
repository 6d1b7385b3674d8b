/**
 * `nodemend-agent rules list [--config FILE] [--source SOURCE] [-o text|json]`
 *
 * Prints every log rule the agent would run with this config, built-in and the operator's, after `logRuleOverrides`:
 * id, origin (built-in, overridden, disabled, operator), sources, reason, severity, occurrence window, pattern
 * and fixtures (lines the rule matches `+`, benign look-alikes it leaves alone `-`, each with its cited source).
 * A rule is also shown as disabled when its monitor or its reason is switched off in the config. `-o json` prints
 * the same as a JSON array, each rule in the `logRules` shape plus `origin`, `severity`, `monitor` and `disabledBy`.
 * A rule or override that cannot run is listed with its error (and on stderr). Exit codes: 0 done, 2 invalid
 * config or rules, 64 usage error.
 */
import type { Severity } from "@nodemend/reason-codes"
import { Effect, Result } from "effect"
import { parseArgs } from "node:util"
import { loadConfig } from "../config/load.ts"
import { ruleOverridesFromConfig } from "../config/rule-overrides.ts"
import { BUILTIN_RULES_WITH_FIXTURES } from "../rules/builtin-fixtures.ts"
import {
  catalogEntryOf,
  describeInvalidRule,
  effectiveRules,
  InvalidRule,
  type RuleOrigin,
  toLogRule
} from "../rules/compile.ts"
import type { RuleFixture, UserRule } from "../rules/overrides.ts"

export const RULES_LIST_USAGE =
  "usage: nodemend-agent rules list [--config FILE] [--source dmesg|journal:IDENT|file:PATH|podlogs:NAME] [-o text|json]"

interface Writable {
  write(chunk: string): unknown
}

/** One row of `rules list`: the rule's data as it runs, and what the config made of it. */
export interface ListedRule extends UserRule {
  readonly origin: RuleOrigin
  /** Why a rule does not run: its id is disabled, or its monitor or its reason is switched off in the config. */
  readonly disabledBy?: "rule" | "monitor" | "reason"
  readonly monitor?: string
  readonly severity?: Severity
  /** The rule cannot run: the error, naming the field. */
  readonly error?: string
}

/** The rules as `rules list` shows them, and the errors of the operator's input. */
export const listRules = (
  overrides: Parameters<typeof effectiveRules>[0]
): { readonly rules: readonly ListedRule[]; readonly errors: readonly InvalidRule[] } => {
  const errors: InvalidRule[] = []
  const reasons = overrides?.reasons ?? {}
  const disabledMonitors = new Set(overrides?.disabledMonitors ?? [])
  const rules = effectiveRules(overrides, BUILTIN_RULES_WITH_FIXTURES, (e) => errors.push(e)).map(
    ({ rule, origin }): ListedRule => {
      let error: string | undefined
      try {
        toLogRule(rule)
      } catch (e) {
        if (!(e instanceof InvalidRule)) throw e
        const invalid =
          origin === "overridden"
            ? new InvalidRule({
                ruleId: e.ruleId,
                field: `logRuleOverrides.${rule.id}${e.field === undefined ? "" : `.${e.field}`}`,
                message: e.message
              })
            : e
        errors.push(invalid)
        error = describeInvalidRule(invalid)
      }
      const entry = catalogEntryOf(rule.reason)
      const o = reasons[rule.reason] ?? (entry === undefined ? undefined : reasons[entry.code])
      const disabledBy =
        origin === "disabled"
          ? "rule"
          : entry !== undefined && disabledMonitors.has(entry.monitor)
            ? "monitor"
            : o?.disabled === true
              ? "reason"
              : undefined
      const minOccurrences = o?.minOccurrences ?? rule.minOccurrences
      const windowSeconds = o?.windowSeconds ?? rule.windowSeconds
      const severity = o?.severity ?? rule.severity ?? entry?.severity
      return {
        ...rule,
        ...(minOccurrences !== undefined ? { minOccurrences } : {}),
        ...(windowSeconds !== undefined ? { windowSeconds } : {}),
        origin,
        ...(disabledBy !== undefined ? { disabledBy } : {}),
        ...(entry !== undefined ? { monitor: entry.monitor } : {}),
        ...(severity !== undefined ? { severity } : {}),
        ...(error !== undefined ? { error } : {})
      }
    }
  )
  return { rules, errors }
}

/** One line on one screen line: control characters (a kmsg record's embedded newlines) and backslashes escaped. */
const shown = (line: string): string => {
  let out = ""
  for (const c of line) {
    const code = c.charCodeAt(0)
    out +=
      c === "\\" ? "\\\\" : c === "\n" ? "\\n" : code < 0x20 ? `\\x${code.toString(16).padStart(2, "0")}` : c
  }
  return out
}

const window = (r: ListedRule) =>
  r.minOccurrences === undefined || r.minOccurrences <= 1
    ? "each"
    : `${r.minOccurrences} in ${r.windowSeconds ?? 0}s`

const fixtureLines = (mark: string, fixtures: readonly RuleFixture[] | undefined): string[] =>
  (fixtures ?? []).map((f) => `    ${mark} ${f.source}: ${shown(f.line)}  [${f.cite}]`)

/** The text form: one header line per rule, then its pattern and fixtures, indented. */
export const formatRulesText = (rules: readonly ListedRule[]): string => {
  const out: string[] = [
    [
      "ID".padEnd(38),
      "ORIGIN".padEnd(10),
      "REASON".padEnd(32),
      "SEVERITY".padEnd(9),
      "WINDOW".padEnd(12),
      "SOURCES"
    ].join(" ")
  ]
  for (const r of rules) {
    const origin =
      r.disabledBy === undefined || r.origin === "disabled"
        ? r.origin
        : `${r.origin}, disabled by ${r.disabledBy}`
    const flags = [r.resolves === true ? "resolves" : "", r.alongside === true ? "alongside" : ""].filter(
      (f) => f !== ""
    )
    out.push(
      [
        r.id.padEnd(38),
        origin.padEnd(10),
        r.reason.padEnd(32),
        (r.severity ?? "?").padEnd(9),
        window(r).padEnd(12),
        r.sources.join(","),
        ...flags
      ]
        .join(" ")
        .trimEnd()
    )
    if (r.error !== undefined) out.push(`    ! ${r.error}`)
    if (r.reasonByGroup !== undefined) {
      const byReason = new Map<string, string[]>()
      for (const [value, reason] of Object.entries(r.reasonByGroup.reasons))
        byReason.set(reason, [...(byReason.get(reason) ?? []), value])
      for (const [reason, values] of byReason)
        out.push(`    reason ${reason} when ${r.reasonByGroup.group} is ${values.join(",")}`)
    }
    out.push(`    pattern ${r.pattern}`)
    out.push(...fixtureLines("+", r.fixtures?.matches), ...fixtureLines("-", r.fixtures?.ignores))
  }
  return `${out.join("\n")}\n`
}

export const runRulesList = async (
  args: readonly string[],
  stdout: Writable,
  stderr: Writable = stdout
): Promise<number> => {
  const rest = args[0] === "list" ? args.slice(1) : args
  let values: { config?: string | undefined; source?: string | undefined; output?: string | undefined }
  try {
    values = parseArgs({
      args: [...rest],
      options: {
        config: { type: "string" },
        source: { type: "string" },
        output: { type: "string", short: "o", default: "text" }
      },
      strict: true,
      allowPositionals: false
    }).values
  } catch (e) {
    stderr.write(`nodemend-agent rules list: ${(e as Error).message}\n${RULES_LIST_USAGE}\n`)
    return 64
  }
  if (values.output !== "text" && values.output !== "json") {
    stderr.write(`nodemend-agent rules list: -o must be text or json\n${RULES_LIST_USAGE}\n`)
    return 64
  }
  const loaded = await Effect.runPromise(Effect.result(loadConfig(values.config)))
  if (Result.isFailure(loaded)) {
    stderr.write(`nodemend-agent rules list: ${loaded.failure.message}\n`)
    return 2
  }
  const { rules, errors } = listRules(ruleOverridesFromConfig(loaded.success))
  const source = values.source
  const selected = source === undefined ? rules : rules.filter((r) => r.sources.includes(source))
  stdout.write(
    values.output === "json" ? `${JSON.stringify(selected, null, 2)}\n` : formatRulesText(selected)
  )
  for (const e of errors) stderr.write(`nodemend-agent rules list: ${describeInvalidRule(e)}\n`)
  return errors.length > 0 ? 2 : 0
}
