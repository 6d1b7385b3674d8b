/**
 * The built-in rules with their fixtures: per rule, real lines it must match and benign look-alikes it must leave
 * alone, each with its cited source (the table is generated from the test suites' fixture lines and checked
 * against them by test/rules/builtin-fixtures.test.ts). Kept out of the running agent's rule path: only
 * `nodemend-agent rules list` and the tests load it.
 */
import { BUILTIN_RULES } from "./builtin-rules.ts"
import { BUILTIN_FIXTURE_TABLE } from "./builtin-fixtures.data.ts"
import type { RuleFixtures } from "./overrides.ts"
import type { BuiltinRule } from "./rule.ts"

export const BUILTIN_FIXTURES: Readonly<Record<string, RuleFixtures>> = BUILTIN_FIXTURE_TABLE

/** The built-in rules as data, fixtures included: exactly the shape of an operator's `logRules` entry. */
export const BUILTIN_RULES_WITH_FIXTURES: readonly BuiltinRule[] = BUILTIN_RULES.map((rule) => {
  const fixtures = BUILTIN_FIXTURES[rule.id]
  return fixtures === undefined ? rule : { ...rule, fixtures }
})
