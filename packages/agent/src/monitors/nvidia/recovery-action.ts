/**
 * The driver's GPU recovery action (NVML field 230, reported by XID 154) as findings. Pure. Value names are the
 * XID 154 message's ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", NVIDIA's XID
 * catalog, row 154); 5 is nvml.h's NVML_GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN.
 */
import type { Detection } from "../../model.ts"
import { nvidiaDetection } from "./findings.ts"

const ACTIONS: Readonly<Record<number, { readonly name: string; readonly reason: string }>> = {
  1: { name: "GPU Reset Required", reason: "NvidiaGPUResetRequired" },
  2: { name: "Node Reboot Required", reason: "NvidiaNodeRebootRequired" },
  3: { name: "Drain P2P", reason: "NvidiaGPUDrainP2PRequired" },
  4: { name: "Drain and Reset", reason: "NvidiaGPUDrainAndResetRequired" },
  5: { name: "Recover IMEX Domain", reason: "NvidiaGPURecoveryActionOther" }
}

const hex = (v: number) => `0x${v.toString(16)}`

/** The finding for a recovery action value on one GPU; none for 0 (NONE: nothing to do). */
export const recoveryActionFindings = (value: number, atMs: number, gpu: string): readonly Detection[] => {
  if (value === 0) return []
  const known = ACTIONS[value]
  const reason = known?.reason ?? "NvidiaGPURecoveryActionOther"
  const action = `${hex(value)} (${known?.name ?? "unknown to this version"})`
  const message =
    reason === "NvidiaGPUResetRequired"
      ? `GPU ${gpu} needs a reset: the driver's recovery action is ${action} (XID 154)`
      : reason === "NvidiaNodeRebootRequired"
        ? `GPU ${gpu} needs a node reboot: the driver's recovery action is ${action} (XID 154)`
        : reason === "NvidiaGPUDrainAndResetRequired"
          ? `GPU ${gpu} needs its work drained and a reset: the driver's recovery action is ${action} (XID 154)`
          : reason === "NvidiaGPUDrainP2PRequired"
            ? `GPU ${gpu} needs its peer-to-peer traffic drained: the driver's recovery action is ${action} (XID 154)`
            : `GPU ${gpu}: the driver's recovery action is ${action} (XID 154)`
  return [nvidiaDetection(reason, message, atMs, gpu)]
}
