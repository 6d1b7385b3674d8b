/**
 * The NVIDIA monitor's settings. Their schema lives with the agent config, which embeds it (`monitors.nvidia`):
 * the config is below the monitors (docs/architecture.md, the agent's layers).
 */
export {
  DcgmTargetSettings,
  defaultNvidiaSettings,
  NvidiaMonitorSettings
} from "../../config/nvidia-settings.ts"
