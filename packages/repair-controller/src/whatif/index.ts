/** What-if replay (`kubectl nodemend record` / `whatif`): the history format and the controller run over it. */
export * from "./history.ts"
export * from "./replay.ts"
export * from "./result.ts"
export * from "./summary.ts"
export { evidenceText } from "../decide/relapse.ts"
export { ConfigFileError, readConfigFile } from "../config/ConfigFile.ts"
