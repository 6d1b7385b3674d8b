export * from "./constants.ts"
export * from "./errors.ts"
export * from "./diag-response.ts"
export * from "./field-value.ts"
export * from "./health-response.ts"
export * from "./layouts.ts"
export * from "./policy-violation.ts"
export { DEFAULT_DCGM_LIBRARY } from "./dcgm-library.ts"
export {
  DEFAULT_POLICY_THRESHOLDS,
  Dcgm,
  type DcgmApi,
  type DcgmSession,
  type DcgmTarget,
  describeTarget,
  type PolicyThresholds,
  type SessionOptions,
  type ViolationEvent,
  WATCHED_FIELDS
} from "./dcgm.ts"
export {
  DEFAULT_NVML_LIBRARY,
  type FabricInfo,
  Nvml,
  type NvmlApi,
  type RecoveryActionReading,
  type NvmlDevice,
  type NvmlEvent,
  type PciInfo,
  type RemappedRows,
  type RetiredPages
} from "./nvml.ts"
