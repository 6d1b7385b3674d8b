/**
 * DCGM field 170, dcgmFabricManagerStatus_t (shared/reference/dcgm-nvml.md 3.6). Per issue #6:
 * 0 (not supported) and 3 (success) are healthy, 2 (training in progress) is a warning, every other value
 * (1 not started, 4 failure, 5 unrecognized, 6 NVML too old, 7+) is `FabricManagerNotRunning`.
 */

export const FM_STATUS_NAMES: Readonly<Record<number, string>> = {
  0: "NotSupported",
  1: "NotStarted",
  2: "InProgress",
  3: "Success",
  4: "Failure",
  5: "Unrecognized",
  6: "NvmlTooOld"
}

export type FabricManagerVerdict = "healthy" | "warning" | "fault"

export const classifyFabricManagerStatus = (status: number): FabricManagerVerdict =>
  status === 0 || status === 3 ? "healthy" : status === 2 ? "warning" : "fault"

export const fabricManagerStatusName = (status: number): string =>
  FM_STATUS_NAMES[status] ?? `Unknown(${status})`
