export { BUILTIN_RULES } from "./builtin-rules.ts"
export {
  catalogEntryOf,
  compileRules,
  type CompiledRule,
  type EffectiveRule,
  effectiveRules,
  InvalidRule,
  type LogMatcher,
  type OnInvalidRule,
  type RuleMatch,
  type RuleOrigin,
  toLogRule
} from "./compile.ts"
export { makeLogRuleEngine, type LogRuleEngine } from "./engine.ts"
export { requiredLiteral } from "./literal.ts"
export { makeOccurrenceGate, type OccurrenceGate } from "./occurrences.ts"
export {
  NO_OVERRIDES,
  ReasonOverride,
  RuleFixture,
  RuleFixtures,
  RuleOverride,
  RuleOverrides,
  UserRule
} from "./overrides.ts"
export type { BuiltinRule, CatalogReason, LogRecord, LogRule, LogSourceId } from "./rule.ts"
export {
  LOG_READER_NAMES,
  type LogReaderName,
  parseSourceId,
  type ParsedSourceId,
  SOURCE_FORMS
} from "./source-id.ts"
