/**
 * @nodemend/agent as a library: the finding model, the agent's config, and the pure condition logic,
 * for tools that want to reason like the agent (the kubectl plugin, tests of other packages).
 * The runnable agent is src/main.ts (`nodemend-agent`).
 */
export type { Detection, Finding, Resolution } from "./model.ts"
export { AgentConfig, DEFAULT_EXCLUDED_INTERFACES } from "./config/schema.ts"
export { ConfigError, decodeConfig, loadConfig, parseConfigText } from "./config/load.ts"
export { applyOverrides } from "./config/overrides.ts"
export {
  applyFinding,
  bootMarker,
  conditionPatch,
  desiredConditions,
  emptyState,
  MAX_MESSAGE_BYTES,
  parseBootMarker,
  restoreState,
  type ConditionPatchEntry,
  type ConditionState,
  type CurrentCondition,
  type DesiredCondition
} from "./k8s/condition-state.ts"
export { CHECKS, CHECK_NAMES, type CheckName } from "./checks/names.ts"
