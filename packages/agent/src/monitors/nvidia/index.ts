// The NVIDIA accelerated-hardware monitor: what the agent's main wires.
export { NvidiaLibraries, type NvidiaLibrariesShape } from "./libraries.ts"
export {
  makeNvidiaMonitor,
  type NvidiaMonitor,
  type NvidiaMonitorContext,
  type NvidiaMonitorSinks,
  type NvidiaMonitorStatus
} from "./monitor.ts"
export { defaultNvidiaSettings, NvidiaMonitorSettings } from "./settings.ts"
export { XidDeduplicator, xidDedupedSink } from "./xid-deduplicator.ts"
export { INSTANCE_GPU_COUNTS } from "./instance-gpu-counts.ts"
