/**
 * NVIDIA's XID catalog, as cited, versioned data: per XID the generations it applies to, the resolution buckets
 * and whether NVIDIA expects it to trigger XID 154 (the driver's recovery action). Rows copied from the source
 * below, never from memory; a cell the retrieved copy does not carry is `undefined` (unknown), not a guess.
 * Only the XIDs nodemend acts on or that the catalog lists for Blackwell (B100/GB200) are carried.
 */

export const XID_CATALOG_SOURCE = {
  title: "Analyzing Xid Errors with the Xid Catalog (Table 1 Xids; Guidance Class table)",
  url: "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
  retrieved: "2026-12-06",
  /** nodemend's revision of this data; bump it with every edit of the rows. */
  revision: 1
} as const

export const GPU_GENERATIONS = ["A100", "H100", "B100", "GB200"] as const
export type GpuGeneration = (typeof GPU_GENERATIONS)[number]

export interface XidCatalogEntry {
  readonly xid: number
  readonly mnemonic: string
  readonly description: string
  /** "Applies to A100 / H100 / B100 / GB200", in that order. */
  readonly appliesTo: Readonly<Record<GpuGeneration, boolean>>
  /** "Resolution Bucket (Immediate Action)". */
  readonly immediate: string
  /** "Resolution Bucket (Investigatory Action)"; undefined where the retrieved copy has none. */
  readonly investigatory: string | undefined
  /** "Xid 154 linkage": the release from which the XID triggers XID 154, "yes; ..." or undefined (none listed). */
  readonly xid154Linkage: string | undefined
  /** Where the row comes from: the source URL and the row. */
  readonly cite: string
}

const row = (
  xid: number,
  mnemonic: string,
  description: string,
  applies: readonly [boolean, boolean, boolean, boolean],
  immediate: string,
  investigatory: string | undefined,
  xid154Linkage?: string
): XidCatalogEntry => ({
  xid,
  mnemonic,
  description,
  appliesTo: { A100: applies[0], H100: applies[1], B100: applies[2], GB200: applies[3] },
  immediate,
  investigatory,
  xid154Linkage,
  cite: `${XID_CATALOG_SOURCE.url} Table 1, Code ${xid}`
})

const Y = true
const N = false
const R565 = "CUDA 12.7; GPU driver R565"
const R570 = "CUDA 12.7; GPU driver R570"
const R575 = "CUDA 12.9; GPU driver R575"

export const XID_CATALOG: readonly XidCatalogEntry[] = [
  row(
    13,
    "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY",
    "Graphics Engine Exception",
    [Y, Y, Y, Y],
    "RESTART_APP",
    "WORKFLOW_XID_13"
  ),
  row(
    31,
    "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
    "GPU memory page fault",
    [Y, Y, Y, Y],
    "RESTART_APP",
    "WORKFLOW_XID_31"
  ),
  row(
    43,
    "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
    "GPU stopped processing",
    [Y, Y, Y, Y],
    "IGNORE",
    "CONTACT_SUPPORT"
  ),
  row(
    45,
    "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
    "Preemptive cleanup, due to previous errors",
    [Y, Y, Y, Y],
    "WORKFLOW_XID_45",
    "Solo: RESTART_FM Not Solo: IGNORE (follow other Xid)"
  ),
  row(
    46,
    "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR",
    "GPU stopped processing",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT"
  ),
  row(
    48,
    "ROBUST_CHANNEL_GPU_ECC_DBE",
    "Double Bit ECC Error",
    [Y, Y, Y, Y],
    "WORKFLOW_XID_48",
    "WORKFLOW_XID_48",
    R565
  ),
  row(
    54,
    "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
    "Auxiliary power is not connected to the GPU board",
    [Y, Y, Y, N],
    "CHECK_MECHANICALS",
    "CONTACT_SUPPORT"
  ),
  row(
    62,
    "PMU_HALT_ERROR",
    "Internal micro-controller halt (newer drivers)",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT",
    R565
  ),
  row(
    63,
    "INFOROM_DRAM_RETIREMENT_EVENT",
    "GPU memory remapping event",
    [Y, Y, Y, Y],
    "IGNORE",
    "IGNORE",
    R565
  ),
  row(
    64,
    "INFOROM_DRAM_RETIREMENT_FAILURE",
    "GPU memory remapping failure",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT",
    R565
  ),
  row(74, "NVLINK_ERROR", "NVLINK Error", [Y, Y, N, N], "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", R565),
  row(
    79,
    "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
    "GPU has fallen off the bus",
    [Y, Y, Y, Y],
    "RESTART_BM",
    "CONTACT_SUPPORT",
    R565
  ),
  row(
    94,
    "ROBUST_CHANNEL_CONTAINED_ERROR",
    "Contained memory error",
    [Y, Y, Y, Y],
    "RESTART_APP",
    "IGNORE (sympathetic)",
    R565
  ),
  row(
    95,
    "ROBUST_CHANNEL_UNCONTAINED_ERROR",
    "Uncontained memory error",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "IGNORE (sympathetic)",
    R565
  ),
  row(
    109,
    "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR",
    "Context Switch Timeout Error",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT",
    R570
  ),
  row(110, "SEC_FAULT_ERROR", "Security Fault Error", [N, Y, Y, Y], "RESET_GPU", "INVESTIGATE_SW", R565),
  row(119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", [Y, Y, Y, Y], "RESET_GPU", "INVESTIGATE_SW"),
  row(120, "GSP_ERROR", "GSP Error", [Y, Y, Y, Y], "RESET_GPU", "INVESTIGATE_SW", R565),
  row(121, "C2C_ERROR", "C2C Error", [N, N, N, Y], "IGNORE", "CONTACT_SUPPORT"),
  row(
    136,
    "ALI_TRAINING_FAIL",
    "Link Training Failed",
    [N, Y, N, N],
    "RESET_GPU",
    "INVESTIGATE_LINK_SI",
    R565
  ),
  row(137, "NVLINK_PRIV_ERR", "NVLink Privilege Error", [Y, Y, Y, Y], "IGNORE", "XID_137_FLOW"),
  row(
    140,
    "UNRECOVERABLE_ECC_ERROR_ESCAPE",
    "ECC Unrecovered Error",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT"
  ),
  row(142, "ROBUST_CHANNEL_NVENC3_ERROR", "NVENC3 Error", [N, N, N, Y], "CONTACT_SUPPORT", undefined),
  row(143, "GPU_INIT_ERROR", "GPU Initialization Error", [N, Y, Y, Y], "RESET_GPU", "CONTACT_SUPPORT", R575),
  row(
    144,
    "NVLINK_SAW_ERROR",
    "NVLINK: SAW Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    145,
    "NVLINK_RLW_ERROR",
    "NVLINK: RLW Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    146,
    "NVLINK_TLW_ERROR",
    "NVLINK: TLW Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    147,
    "NVLINK_TREX_ERROR",
    "NVLINK: TREX Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    148,
    "NVLINK_NVLPW_CTRL_ERROR",
    "NVLINK: NVLPW_CTRL Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    149,
    "NVLINK_NETIR_ERROR",
    "NVLINK: NETIR Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    150,
    "NVLINK_MSE_ERROR",
    "NVLINK: MSE Error",
    [N, N, Y, Y],
    "WORKFLOW_NVLINK5_ERR",
    "WORKFLOW_NVLINK5_ERR",
    R565
  ),
  row(
    151,
    "ROBUST_CHANNEL_KEY_ROTATION_ERROR",
    "Key rotation Error",
    [N, Y, Y, Y],
    "RESTART_VM",
    "CONTACT_SUPPORT"
  ),
  row(
    154,
    "GPU_RECOVERY_ACTION_CHANGED",
    "GPU Recovery Action Changed",
    [Y, Y, Y, Y],
    "XID_154",
    "N/A Informational only regarding another Xid"
  ),
  row(
    155,
    "NVLINK_SW_DEFINED_ERROR",
    "NVLINK: SW Defined Error",
    [N, N, Y, Y],
    "RESET_GPU",
    "INVESTIGATE_SW_USER",
    R565
  ),
  row(
    156,
    "RESOURCE_RETIREMENT_EVENT",
    "Resource Retirement Event",
    [N, Y, Y, Y],
    "RESET_GPU",
    "IGNORE",
    R565
  ),
  row(
    157,
    "RESOURCE_RETIREMENT_FAILURE",
    "Resource Retirement Failure",
    [N, Y, Y, Y],
    "IGNORE",
    "CONTACT_SUPPORT"
  ),
  row(
    158,
    "GPU_FATAL_TIMEOUT",
    "GPU Fatal Timeout",
    [Y, Y, Y, Y],
    "RESET_GPU",
    "CONTACT_SUPPORT",
    "yes; support with Xid introduction"
  ),
  row(
    159,
    "ROBUST_CHANNEL_CHI_NON_DATA_ERROR",
    "CHI Non-Data Error",
    [N, N, Y, Y],
    "CHECK_UVM",
    "SYMPATHETIC_REPORT_SOLO",
    "yes; support with Xid introduction"
  ),
  row(
    160,
    "CHANNEL_RETIREMENT_EVENT",
    "Channel Retirement Event",
    [N, N, Y, Y],
    "IGNORE",
    "INVESTIGATE_SW",
    R575
  ),
  row(
    161,
    "CHANNEL_RETIREMENT_FAILURE",
    "Channel Retirement Failure",
    [N, N, Y, Y],
    "IGNORE",
    "INVESTIGATE_SW",
    R575
  )
]

const BY_XID = new Map(XID_CATALOG.map((e) => [e.xid, e]))

export const catalogEntry = (xid: number): XidCatalogEntry | undefined => BY_XID.get(xid)
