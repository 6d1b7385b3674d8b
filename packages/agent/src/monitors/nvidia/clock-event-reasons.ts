/**
 * Clock event (throttle) reasons, DCGM field 112 / nvmlDeviceGetCurrentClocksEventReasons
 * (shared/reference/dcgm-nvml.md 3.5). Idle, application clocks, SW power cap, sync boost and display clock
 * are normal operating states; DCGM's diagnostic treats HW slowdown, SW thermal, HW thermal and HW power
 * brake (0xE8) as failures.
 */

export const CLOCK_EVENT_REASON_NAMES: readonly (readonly [bigint, string])[] = [
  [0x1n, "gpu_idle"],
  [0x2n, "clocks_setting"],
  [0x4n, "sw_power_cap"],
  [0x8n, "hw_slowdown"],
  [0x10n, "sync_boost"],
  [0x20n, "sw_thermal"],
  [0x40n, "hw_thermal"],
  [0x80n, "hw_power_brake"],
  [0x100n, "display_clocks"]
]

export const CLOCK_EVENT_FAILURE_MASK = 0xe8n

/** Names of every set bit, in bit order (deterministic, unlike a map walk). */
export const clockEventReasonNames = (mask: bigint): readonly string[] =>
  CLOCK_EVENT_REASON_NAMES.filter(([bit]) => (mask & bit) !== 0n).map(([, name]) => name)

/** Names of the set bits that are failures; empty when the GPU is merely idle, capped, boosting... */
export const clockEventFailures = (mask: bigint): readonly string[] =>
  clockEventReasonNames(mask & CLOCK_EVENT_FAILURE_MASK)
