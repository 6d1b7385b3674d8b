// The contract as the package's sources define it today.
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { KEYS } from "../src/keys.ts"
import { DEFAULT_REPAIR_POLICIES, NEVER_REPAIR_CONDITION_TYPES } from "../src/policies.ts"
import { type ContractSources, type Lock, makeLock } from "./contract.ts"

export const SOURCES: ContractSources = {
  catalog: CATALOG,
  conditionTypes: CONDITION_TYPE_INFO,
  neuronReady: NEURON_READY,
  fatalXids: FATAL_XIDS,
  defaultRepairPolicies: DEFAULT_REPAIR_POLICIES,
  neverRepairConditionTypes: NEVER_REPAIR_CONDITION_TYPES,
  keys: KEYS
}

export const currentContract = (version: string): Lock => makeLock(version, SOURCES)
