/**
 * Log rules as data, and the operator's changes to them. Built-in rules (builtin-rules.ts) and the operator's
 * `logRules` share one shape, `UserRule`, and one compile path (compile.ts); `logRuleOverrides` changes or
 * disables a rule by id, and `reasons` overrides act per reason code. The runtime maps its YAML config onto
 * `RuleOverrides`; `rules check|list --config` read the same file.
 */
import { Schema } from "effect"
import { parseSourceId } from "./source-id.ts"

const Severity = Schema.Literals(["Condition", "Event"])
const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

export const ReasonOverride = Schema.Struct({
  disabled: Schema.optionalKey(Schema.Boolean),
  severity: Schema.optionalKey(Severity),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt)
})
export type ReasonOverride = typeof ReasonOverride.Type

/** `READER` or `READER:ARGUMENT`, of a registered reader (source-id.ts). */
const SourceId = Schema.String.check(
  Schema.makeFilter((id: string) => {
    const parsed = parseSourceId(id)
    return parsed._tag === "Parsed" ? undefined : parsed.message
  })
)
const NonEmpty = Schema.String.check(Schema.isMinLength(1))

/** One example line of a rule, with where it was seen (a public report, or the format string it renders). */
export const RuleFixture = Schema.Struct({
  source: SourceId,
  line: Schema.String,
  cite: Schema.String
})
export type RuleFixture = typeof RuleFixture.Type

/** Lines the rule must match, and benign look-alikes (same source, same literal) it must leave alone. */
export const RuleFixtures = Schema.Struct({
  matches: Schema.optionalKey(Schema.Array(RuleFixture)),
  ignores: Schema.optionalKey(Schema.Array(RuleFixture))
})
export type RuleFixtures = typeof RuleFixtures.Type

/**
 * A log rule, built-in or the operator's. `reason` is a reason code of the catalog, or a catalog template
 * (`NvidiaXID{code}Warning`) whose placeholders are filled from the pattern's named groups.
 */
export const UserRule = Schema.Struct({
  id: NonEmpty,
  sources: Schema.Array(SourceId).check(Schema.isMinLength(1)),
  reason: Schema.String,
  /**
   * The reason by the value of one named group (`{ group: "code", reasons: { "79": "NvidiaXID{code}Error" } }`);
   * a value not listed gives `reason`.
   */
  reasonByGroup: Schema.optionalKey(
    Schema.Struct({ group: NonEmpty, reasons: Schema.Record(Schema.String, Schema.String) })
  ),
  /** A JavaScript regular expression (no flags); named groups fill `{placeholders}`. */
  pattern: NonEmpty,
  /** Substrings, one of which occurs in every matching line; derived from the pattern when omitted. */
  literals: Schema.optionalKey(Schema.Array(NonEmpty)),
  message: Schema.optionalKey(Schema.String),
  subject: Schema.optionalKey(Schema.String),
  /** Condition or Event instead of the catalog's severity for this rule's matches. */
  severity: Schema.optionalKey(Severity),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt),
  /** The line clears the reason (a Resolution) instead of raising it. */
  resolves: Schema.optionalKey(Schema.Boolean),
  /**
   * Fires alongside its monitor's first match instead of competing with it: counts the lines of an Event rule
   * and escalates a run of them (10 corrected memory errors on one DIMM in 24 h).
   */
  alongside: Schema.optionalKey(Schema.Boolean),
  /**
   * A decoder of rules/decoders.ts (`nvidia-nvlink5-reset-gpu`): the match fires only when it says the line's
   * named groups (register values) mean the rule's reason.
   */
  decoder: Schema.optionalKey(NonEmpty),
  fixtures: Schema.optionalKey(RuleFixtures)
})
export type UserRule = typeof UserRule.Type

/**
 * A change to one rule (built-in or the operator's), by id: `disabled` drops it; any other field replaces the
 * rule's own (a new `pattern` without `literals` gets its literal derived again).
 */
export const RuleOverride = Schema.Struct({
  disabled: Schema.optionalKey(Schema.Boolean),
  sources: Schema.optionalKey(Schema.Array(SourceId).check(Schema.isMinLength(1))),
  reason: Schema.optionalKey(Schema.String),
  pattern: Schema.optionalKey(NonEmpty),
  literals: Schema.optionalKey(Schema.Array(NonEmpty)),
  message: Schema.optionalKey(Schema.String),
  subject: Schema.optionalKey(Schema.String),
  severity: Schema.optionalKey(Severity),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt)
})
export type RuleOverride = typeof RuleOverride.Type

export const RuleOverrides = Schema.Struct({
  reasons: Schema.optionalKey(Schema.Record(Schema.String, ReasonOverride)),
  /** Monitors switched off: their rules are not compiled, and a source only they read is never opened. */
  disabledMonitors: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Changes to rules by id (config `logRuleOverrides`). */
  rules: Schema.optionalKey(Schema.Record(Schema.String, RuleOverride)),
  /** The operator's own rules (config `logRules`). */
  extraRules: Schema.optionalKey(Schema.Array(UserRule))
})
export type RuleOverrides = typeof RuleOverrides.Type

export const NO_OVERRIDES: RuleOverrides = {}
