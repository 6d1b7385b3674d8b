/** DCGM policy violations (push path) -> catalog findings. */
import type { PolicyViolation } from "@nodemend/dcgm-native"
import type { Detection } from "../../model.ts"
import { nvidiaDetection, xidDetection } from "./findings.ts"

/**
 * The detection for a violation. `subject` names the GPU (its PCI address when known). XIDs are returned
 * too; the caller runs them through the XID deduplicator first. `observedAtMs` is DCGM's sample time.
 */
export const violationDetection = (v: PolicyViolation, subject: string): Detection => {
  const at = Math.floor(v.timestampUs / 1000)
  switch (v._tag) {
    case "Xid":
      return xidDetection(v.xid, at, subject)
    case "DoubleBitEcc":
      return nvidiaDetection(
        "NvidiaDoubleBitError",
        `detected ${v.errors} Nvidia Double Bit error(s) on location ${v.location}`,
        at,
        subject
      )
    case "NvLink":
      return nvidiaDetection(
        "NvidiaNVLinkError",
        `detected ${v.counter} NVLink errors on fieldId ${v.fieldId}`,
        at,
        subject
      )
    case "RetiredPages":
      return nvidiaDetection(
        "NvidiaPageRetirement",
        `detected ${v.sbePages} SBE, and ${v.dbePages} DBE page retirements`,
        at,
        subject
      )
    case "Power":
      return nvidiaDetection(
        "NvidiaPowerError",
        `detected power usage outside of thresholds with severity code ${v.watts}`,
        at,
        subject
      )
    case "Thermal":
      return nvidiaDetection(
        "NvidiaThermalError",
        `detected GPU thermals outside of thresholds with severity code ${v.temperatureC}`,
        at,
        subject
      )
    case "PcieReplay":
      return nvidiaDetection("NvidiaPCIeError", `detected ${v.counter} PCIe replays`, at, subject)
  }
}
