/**
 * What NVIDIA's resolution bucket (Immediate Action) asks of nodemend: a repair action, "follow the driver's
 * recovery action" (XID 154), or undetermined without decoding the XID's registers. Pure. nodemend cannot
 * reset one GPU or restart one app: a GPU reset is a node reboot here, an app's restart is the app's business.
 */
import type { RepairAction } from "@nodemend/reason-codes"
import { catalogEntry, type GpuGeneration } from "./xid-catalog.ts"

export type CatalogAction =
  | { readonly _tag: "Repair"; readonly action: RepairAction }
  /** XID_154 / WORKFLOW_NVLINK5_ERR: the driver names the action in XID 154 (NVML field 230). */
  | { readonly _tag: "FollowRecoveryAction" }
  /** The bucket needs the XID's registers decoded (WORKFLOW_NVLINK_ERR, CHECK_UVM) or is not in this table. */
  | { readonly _tag: "Undetermined"; readonly bucket: string }
  /** The catalog says the XID does not occur on this generation. */
  | { readonly _tag: "NotApplicable" }
  /** The XID is not in the carried catalog. */
  | { readonly _tag: "NotCatalogued" }

/** The documented mapping (docs/nvidia-monitor.md, "NVIDIA's XID catalog"). */
export const BUCKET_ACTIONS: Readonly<Record<string, RepairAction | "FollowRecoveryAction">> = {
  RESTART_APP: "None",
  IGNORE: "None",
  WORKFLOW_XID_45: "None",
  RESET_GPU: "Reboot",
  RESTART_BM: "Reboot",
  RESTART_VM: "Reboot",
  // Guidance Class: solo RESET_GPU; with 63/64 DRAIN_AND_RESET. Both are a node reboot here.
  WORKFLOW_XID_48: "Reboot",
  CHECK_MECHANICALS: "Replace",
  CONTACT_SUPPORT: "Replace",
  XID_154: "FollowRecoveryAction",
  WORKFLOW_NVLINK5_ERR: "FollowRecoveryAction"
}

export const bucketAction = (bucket: string): CatalogAction => {
  const a = BUCKET_ACTIONS[bucket]
  if (a === undefined) return { _tag: "Undetermined", bucket }
  return a === "FollowRecoveryAction" ? { _tag: "FollowRecoveryAction" } : { _tag: "Repair", action: a }
}

/** The catalog's action for an XID on a GPU generation. */
export const catalogAction = (xid: number, generation: GpuGeneration): CatalogAction => {
  const entry = catalogEntry(xid)
  if (entry === undefined) return { _tag: "NotCatalogued" }
  if (!entry.appliesTo[generation]) return { _tag: "NotApplicable" }
  return bucketAction(entry.immediate)
}

/**
 * Fatal XIDs whose locked 1.x action (FATAL_XIDS in @nodemend/reason-codes) differs from the catalog's: changing
 * one is a major release of the contract, so they stay until one, and the reason is recorded here.
 */
export const LOCKED_ACTION_DIFFERENCES: Readonly<Record<number, string>> = {
  63: "catalog IGNORE (None); locked Reboot: the EKS agent keeps 63 fatal because EC2 recommends replacement",
  74: "catalog WORKFLOW_NVLINK_ERR (decode the registers); locked Replace, the EKS docs' action",
  79: "catalog RESTART_BM (Reboot); locked Replace, the EKS docs' action",
  119: "catalog RESET_GPU (Reboot); locked Replace, the EKS docs' action",
  120: "catalog RESET_GPU (Reboot); locked Replace, the EKS docs' action",
  140: "catalog RESET_GPU (Reboot); locked Replace, the EKS docs' action"
}
