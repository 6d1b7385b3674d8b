/**
 * Maps the agent config onto the log rules engine's override shape. A disabled monitor's rules are not
 * compiled, so a log source only it reads is never opened (its findings would be dropped in the finding
 * sink anyway, config/overrides.ts).
 */
import type { RuleOverrides } from "../rules/overrides.ts"
import type { AgentConfig, ReasonOverride } from "./schema.ts"

export const ruleOverridesFromConfig = (config: AgentConfig): RuleOverrides => {
  const reasons: Record<string, ReasonOverride> = {}
  for (const settings of Object.values(config.monitors))
    for (const [reason, o] of Object.entries(settings.reasons)) reasons[reason] = o
  const disabledMonitors = Object.entries(config.monitors)
    .filter(([, settings]) => !settings.enabled)
    .map(([name]) => name)
  return { reasons, disabledMonitors, rules: config.logRuleOverrides, extraRules: config.logRules }
}
