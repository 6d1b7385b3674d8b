/**
 * Operator overrides of the log rules: per reason (disable, severity, occurrence window) and extra user
 * rules. The runtime maps its YAML config onto this shape; `rules check --config` reads it as JSON or YAML.
 */
import { Schema } from "effect"

const Severity = Schema.Literals(["Condition", "Event"])
const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

export const ReasonOverride = Schema.Struct({
  disabled: Schema.optionalKey(Schema.Boolean),
  severity: Schema.optionalKey(Severity),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt)
})
export type ReasonOverride = typeof ReasonOverride.Type

const SourceId = Schema.String.check(
  Schema.isPattern(/^(?:dmesg|journal:[^\s]+|file:\/[^\s]*|podlogs:[^\s]+)$/u, {
    message: "expected dmesg, journal:IDENT, file:/ABSOLUTE/PATH or podlogs:NAME"
  })
)

/** A rule added by the operator. `reason` must be a reason code of the catalog. */
export const UserRule = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1)),
  sources: Schema.Array(SourceId).check(Schema.isMinLength(1)),
  reason: Schema.String,
  /** A JavaScript regular expression (no flags); named groups fill `{placeholders}`. */
  pattern: Schema.String.check(Schema.isMinLength(1)),
  /** Substrings, one of which occurs in every matching line; derived from the pattern when omitted. */
  literals: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMinLength(1)))),
  message: Schema.optionalKey(Schema.String),
  subject: Schema.optionalKey(Schema.String),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt),
  /** The line clears the reason (a Resolution) instead of raising it. */
  resolves: Schema.optionalKey(Schema.Boolean)
})
export type UserRule = typeof UserRule.Type

export const RuleOverrides = Schema.Struct({
  reasons: Schema.optionalKey(Schema.Record(Schema.String, ReasonOverride)),
  /** Monitors switched off: their rules are not compiled, and a source only they read is never opened. */
  disabledMonitors: Schema.optionalKey(Schema.Array(Schema.String)),
  extraRules: Schema.optionalKey(Schema.Array(UserRule))
})
export type RuleOverrides = typeof RuleOverrides.Type

export const NO_OVERRIDES: RuleOverrides = {}
