/**
 * DCGM 4.x and NVML constants, by number (DCGM 4.6 renamed several fields; the numbers are stable).
 * Source: shared/reference/dcgm-nvml.md sections 1-5.
 */

/** dcgmReturn_t values this package reacts to (the full list is in the reference, section 1.4). */
export const DcgmReturn = {
  OK: 0,
  BADPARAM: -1,
  GENERIC_ERROR: -3,
  NOT_CONFIGURED: -5,
  NOT_SUPPORTED: -6,
  INIT_ERROR: -7,
  UNINITIALIZED: -10,
  TIMEOUT: -11,
  VER_MISMATCH: -12,
  NO_DATA: -14,
  STALE_DATA: -15,
  NOT_WATCHED: -16,
  NO_PERMISSION: -17,
  GPU_IS_LOST: -18,
  CONNECTION_NOT_VALID: -21,
  IN_USE: -34
} as const

/** nvmlReturn_t values this package reacts to. */
export const NvmlReturn = {
  SUCCESS: 0,
  UNINITIALIZED: 1,
  INVALID_ARGUMENT: 2,
  NOT_SUPPORTED: 3,
  NO_PERMISSION: 4,
  INSUFFICIENT_SIZE: 7,
  DRIVER_NOT_LOADED: 9,
  TIMEOUT: 10,
  FUNCTION_NOT_FOUND: 13,
  GPU_IS_LOST: 15,
  ARGUMENT_VERSION_MISMATCH: 25
} as const

export const DCGM_GROUP_ALL_GPUS = 0x7fffffff
export const DCGM_GROUP_ALL_NVSWITCHES = 0x7ffffffe
export const DCGM_MAX_NUM_DEVICES = 32
export const DCGM_OPERATION_MODE_AUTO = 1

/** dcgm_field_entity_group_t */
export const EntityGroup = { NONE: 0, GPU: 1, VGPU: 2, SWITCH: 3, GPU_I: 4, GPU_CI: 5, LINK: 6 } as const

/** dcgmPolicyCondition_t bits. */
export const PolicyCondition = {
  DBE: 0x01,
  PCI: 0x02,
  MAX_PAGES_RETIRED: 0x04,
  THERMAL: 0x08,
  POWER: 0x10,
  NVLINK: 0x20,
  XID: 0x40
} as const
export type PolicyConditionName = keyof typeof PolicyCondition
export const ALL_POLICY_CONDITIONS = 0x7f

/** dcgmPolicyConditionIdx_t: the index of a condition's parameter in dcgmPolicy_t.parms. */
export const PolicyConditionIndex: Readonly<Record<PolicyConditionName, number>> = {
  DBE: 0,
  PCI: 1,
  MAX_PAGES_RETIRED: 2,
  THERMAL: 3,
  POWER: 4,
  NVLINK: 5,
  XID: 6
}

/** dcgmPolicyConditionDbe_t.location */
export const DBE_LOCATIONS = ["L1", "L2", "Device", "Register", "Texture"] as const

/** DCGM field ids used by the monitor. */
export const FieldId = {
  SYSTEM_GPU_QUANTITY: 4,
  PCI_BUS_ID: 57,
  CLOCKS_EVENT_REASONS: 112,
  GPU_TEMP: 150,
  BOARD_POWER: 155,
  FABRIC_MANAGER_STATUS: 170,
  FABRIC_MANAGER_ERROR: 171,
  FABRIC_HEALTH_MASK: 174,
  PCIE_REPLAY_TOTAL: 202,
  XID_ERROR: 230,
  ECC_DBE_VOL_DEV: 319,
  NVLINK_CRC_FLIT_ERROR_TOTAL: 409,
  SXID_FATAL_ERROR: 856,
  SXID_NON_FATAL_ERROR: 857
} as const

/** Field types: the ASCII code of a letter. */
export const FieldType = { BINARY: 98, DOUBLE: 100, INT64: 105, STRING: 115, TIMESTAMP: 116 } as const

/** dcgmHealthSystems_t */
export const HealthSystem = {
  PCIE: 0x1,
  NVLINK: 0x2,
  PMU: 0x4,
  MCU: 0x8,
  MEM: 0x10,
  SM: 0x20,
  INFOROM: 0x40,
  THERMAL: 0x80,
  POWER: 0x100,
  DRIVER: 0x200,
  NVSWITCH_NONFATAL: 0x400,
  NVSWITCH_FATAL: 0x800,
  CONNECTX: 0x1000,
  ALL: 0xffffffff
} as const

/** dcgmHealthWatchResults_t (dcgm_structs.h). */
export const HealthResult = { PASS: 0, WARN: 10, FAIL: 20 } as const

/** dcgmError_t codes the monitor names (dcgm_errors.h, DCGM v4.6.0). */
export const DcgmErrorCode = {
  PCI_REPLAY_RATE: 3,
  VOLATILE_DBE_DETECTED: 4,
  NVLINK_DOWN: 14,
  XID_ERROR: 101,
  /** IMEX domain or daemon status is unhealthy: not a GPU fault, the monitor skips it (as NMA does). */
  IMEX_UNHEALTHY: 122
} as const

/** int64 "blank" sentinels: a value >= BLANK is not data (section 3.3). */
export const DCGM_INT64_BLANK = 0x7ffffffffffffff0n
export const DCGM_FP64_BLANK = 140737488355328.0

/** NVML event type bits. */
export const NvmlEventType = {
  SingleBitEccError: 0x1n,
  DoubleBitEccError: 0x2n,
  XidCriticalError: 0x8n
} as const

/**
 * NVML field ids (NVML's own id space, not DCGM's) and nvmlDeviceGpuRecoveryAction_t, from NVIDIA/go-nvml
 * gen/nvml/nvml.h (commit 2f9e261, 2026-07-01): `NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230` "None/Reset/Reboot/
 * Drain P2P/Drain and Reset"; its change is reported as XID 154 (GPU_RECOVERY_ACTION_CHANGED).
 */
export const NvmlFieldId = { GPU_RECOVERY_ACTION: 230 } as const
export const NvmlGpuRecoveryAction = {
  NONE: 0,
  GPU_RESET: 1,
  NODE_REBOOT: 2,
  DRAIN_P2P: 3,
  DRAIN_AND_RESET: 4,
  RECOVER_IMEX_DOMAIN: 5
} as const

/** nvmlGpuFabricState_t */
export const FabricState = { NOT_SUPPORTED: 0, NOT_STARTED: 1, IN_PROGRESS: 2, COMPLETED: 3 } as const

/** nvmlPageRetirementCause_t */
export const PageRetirementCause = { MULTIPLE_SINGLE_BIT_ECC: 0, DOUBLE_BIT_ECC: 1 } as const
