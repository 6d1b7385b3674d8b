/**
 * The periodic checks by name. The table lives with the agent config, whose `checks:` keys must be these names:
 * the config is below the checks (docs/architecture.md, the agent's layers).
 */
export { CHECK_NAMES, CHECKS, type CheckName } from "../config/check-names.ts"
