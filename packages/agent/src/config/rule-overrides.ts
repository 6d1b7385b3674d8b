/**
 * Maps the agent config onto the log rules engine's override shape. A disabled monitor's log findings
 * are dropped later, in the finding sink (config/overrides.ts), like those of its periodic checks.
 */
import type { RuleOverrides } from "../rules/overrides.ts"
import type { AgentConfig, ReasonOverride } from "./schema.ts"

export const ruleOverridesFromConfig = (config: AgentConfig): RuleOverrides => {
  const reasons: Record<string, ReasonOverride> = {}
  for (const settings of Object.values(config.monitors))
    for (const [reason, o] of Object.entries(settings.reasons)) reasons[reason] = o
  return { reasons, extraRules: config.logRules }
}
