/**
 * NVIDIA devices that nobody watches: the one Event that says why (AcceleratedHardwareReady itself stays
 * absent, never Unknown). Kept apart from the monitor so the agent's main can use it without loading koffi.
 */
import { detection } from "../../checks/finding.ts"
import type { Detection } from "../../model.ts"

/** `problems`: why each library failed to load (NvidiaLibraries.problems). */
export const notWatchingDetection = (problems: readonly string[], nowMs: number): Detection =>
  detection(
    "NvidiaMonitorNotWatching",
    `NVIDIA GPUs are not monitored: ${problems.join("; ")}`.slice(0, 1024),
    nowMs
  )
