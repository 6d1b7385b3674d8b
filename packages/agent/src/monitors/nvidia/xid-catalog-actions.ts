/**
 * What NVIDIA's resolution bucket (Immediate Action) asks of nodemend: a repair action, "follow the driver's
 * recovery action" (XID 154), or undetermined without decoding the XID's registers. Pure. nodemend cannot
 * reset one GPU or restart one app: a GPU reset is a node reboot here, an app's restart is the app's business.
 */
import type { RepairAction } from "@nodemend/reason-codes"
import { catalogEntry, GPU_GENERATIONS, type GpuGeneration, type XidCatalogEntry } from "./xid-catalog.ts"

export type CatalogAction =
  | { readonly _tag: "Repair"; readonly action: RepairAction }
  /**
   * XID_154 / WORKFLOW_NVLINK5_ERR: the driver names the action in XID 154 (NVML field 230); for 144-150 the kernel
   * line's registers are decoded too (rules/nvlink5-decode.ts).
   */
  | { readonly _tag: "FollowRecoveryAction" }
  /** The bucket depends on what this table cannot know (CHECK_UVM: whether UVM/vGPU is used) or is not in it. */
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
  // XID 74's register decode (Hopper) guides the investigation; the row's own text: "A GPU reset or node reboot is
  // needed to clear this error", and if a reboot does not clear it, the vendor: nodemend's escalation replaces.
  WORKFLOW_NVLINK_ERR: "Reboot",
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

const STRENGTH: Readonly<Record<RepairAction, number>> = { None: 0, Reboot: 1, Replace: 2 }

/**
 * The one default action of an XID's reason code, from the catalog's row: the strongest node action its bucket
 * asks for on any generation the XID applies to. A reason code does not say which GPU generation raised it, and a
 * too-weak action leaves a GPU broken while the controller only escalates a Reboot to a Replace, never the
 * reverse. A bucket that defers to the driver (XID 154, the NVLink 5 decode) or is undetermined is no node action
 * for the XID itself: XID 154's recovery action and the 144-150 decode carry their own reasons (contract 7).
 */
export const defaultActionOfEntry = (entry: XidCatalogEntry): RepairAction => {
  let strongest: RepairAction = "None"
  for (const generation of GPU_GENERATIONS) {
    if (!entry.appliesTo[generation]) continue
    const a = bucketAction(entry.immediate)
    if (a._tag === "Repair" && STRENGTH[a.action] > STRENGTH[strongest]) strongest = a.action
  }
  return strongest
}

/** The default action of a carried XID; undefined for an XID the carried catalog does not list. */
export const catalogDefaultAction = (xid: number): RepairAction | undefined => {
  const entry = catalogEntry(xid)
  return entry === undefined ? undefined : defaultActionOfEntry(entry)
}
