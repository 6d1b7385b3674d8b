/**
 * NVIDIA's "XID 144-150 Decode" (the Blackwell NVLink 5 XIDs: SAW, RLW, TLW, TREX, NVLPW, NETIR, MSE), as cited,
 * versioned data, and the decode it prescribes. Pure. The catalog's WORKFLOW_NVLINK5_ERR guidance class gives the
 * message format: `Xid (PCI:0000:BB:DF): <Xid Number> <sub component> <fatal vs nonfatal> <Crosscontain>
 * <injected> <link> (<intrInfo> <errorStatus> <errorDebugData[0]> ... <errorDebugData[4]>)`; "<intrInfo>,
 * <errorStatus> must be decoded and evaluated using 'XID 144-150 Decode' to derive the final resolution".
 *
 * The table's IntrInfo masks are 32 characters, bit 31 first, `-` a bit left to "optional user decode" (the page
 * renders each `---` as one dash glyph; read back so, every mask has 32 characters). Drivers before R575 write V1
 * (subcode in IntrInfo[9:5]), R575 and later V2 (subcode in IntrInfo[6:0]); a line matches a row through either.
 * Bits 25:20 carry the NETIR link-down reason. Rows are copied from the source, never from observed lines.
 */

export const NVLINK5_DECODE_SOURCE = {
  title:
    'Analyzing Xid Errors with the Xid Catalog: "XID 144-150 Decode" table and the WORKFLOW_NVLINK5_ERR guidance class',
  url: "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
  retrieved: "2026-12-06",
  /** nodemend's revision of this data; bump it with every edit of the rows. */
  revision: 1
} as const

/** The table's "Resolution Bucket (Immediate Action)" values (XID_154_EVAL: XID 154's action, else RESTART_APP). */
export type Nvlink5Bucket = "IGNORE" | "RESET_GPU" | "XID_154_EVAL"

export interface Nvlink5DecodeRow {
  readonly xid: number
  /** "Subcode", V1 name / V2 name where they differ. */
  readonly subcode: string
  /** IntrInfo mask for V1 (< R575) and V2 (>= R575) messages: 32 characters, `-` = any bit. */
  readonly v1: string
  readonly v2: string
  /** "Error Status (hex)"; undefined where the table gives none (any value). */
  readonly errorStatus: number | undefined
  readonly immediate: Nvlink5Bucket
}

/** A 32-character mask from the table's fields: link-down bits 25:20, then the low bits as printed. */
const mask = (linkDown: string, low: string) => `------${linkDown}${"-".repeat(20 - low.length)}${low}`

const unit =
  (xid: number, subcode: string, v1Low: string, v2Low: string, linkDown = "000000") =>
  (statuses: Readonly<Record<string, Nvlink5Bucket>>): Nvlink5DecodeRow[] =>
    Object.entries(statuses).map(([status, immediate]) => ({
      xid,
      subcode,
      v1: mask(linkDown, v1Low),
      v2: mask(linkDown, v2Low),
      errorStatus: status === "any" ? undefined : Number(status),
      immediate
    }))

const I = "IGNORE"
const R = "RESET_GPU"
const E = "XID_154_EVAL"
/** Promotable RLW_RXPIPE errors: "Action 2" applies when the decode for action 2 (one more bit) matches. */
const RXPIPE = { "0x00000001": I, "0x00000002": I, "0x00000004": I } as const
const RXPIPE_ACTION_2 = { "0x00000001": R, "0x00000002": R, "0x00000004": R } as const
/** TLW_RX and TLW_TX pipes share their error statuses. */
const TLW_PIPE = { "0x00000001": I, "0x00000002": I, "0x00000004": R, "0x80000000": I } as const

/** NETIR_LINK_EVT / NETIR_LINK_DOWN: the link-down reason in IntrInfo[25:20] chooses the row. */
const LINK_DOWN: Readonly<Record<string, Nvlink5Bucket>> = {
  "000000": R,
  "000001": R,
  "000010": R,
  "000100": R,
  "001010": R,
  "001111": R,
  "010000": R,
  "010001": R,
  "010010": R,
  "010101": R,
  "010110": R,
  "100000": R,
  "100001": R,
  "100010": R,
  "100011": R,
  "100100": R,
  "100101": R,
  "100110": I,
  "101000": I,
  "101010": R,
  "101011": R
}

export const NVLINK5_DECODE: readonly Nvlink5DecodeRow[] = [
  ...unit(
    144,
    "SAW_MVB",
    "0000100001",
    "0000001"
  )({
    "0x00000001": I,
    "0x00000002": R,
    "0x00000004": I,
    "0x00000008": I,
    "0x00000010": R,
    "0x00000020": I
  }),
  ...unit(145, "RLW_CTRL", "0001100010", "0000011")({ "0x80000000": I }),
  ...unit(
    145,
    "RLW_REMAP",
    "0010000010",
    "0000100"
  )({
    "0x00000001": E,
    "0x00000002": E,
    "0x00000004": E,
    "0x00000008": E,
    "0x00000010": E,
    "0x00000020": E,
    "0x00000040": R,
    "0x00000080": R,
    "0x00000100": I,
    "0x00000200": I,
    "0x80000000": I
  }),
  ...unit(145, "RLW_RSPCOL", "0010100010", "0000101")({ "0x00000001": I, "0x00000002": R, "0x80000000": I }),
  ...unit(145, "RLW_RXPIPE", "00011000010", "00000110")(RXPIPE),
  ...unit(145, "RLW_RXPIPE (action 2)", "10011000010", "10000110")(RXPIPE_ACTION_2),
  ...unit(145, "RLW_RXPIPE", "0011000010", "0000110")({ "0x00000008": I, "0x80000000": I }),
  ...unit(
    145,
    "RLW_SRC_TRACK",
    "0011100010",
    "0000111"
  )({
    "0x00000001": R,
    "0x00000002": I,
    "0x00000004": E,
    "0x00000008": E,
    "0x00000010": R,
    "0x00000020": R,
    "0x80000000": I
  }),
  ...unit(
    145,
    "RLW_TAGSTATE",
    "0100000010",
    "0001000"
  )({
    "0x00000001": I,
    "0x00000002": R,
    "0x00010000": I,
    "0x00020000": R,
    "0x00100000": R,
    "0x80000000": I
  }),
  ...unit(146, "TLW_CTRL", "0100100011", "0001001")(TLW_PIPE),
  ...unit(146, "TLW_RX/TLW_RX_PIPE0", "0101000011", "0001010")(TLW_PIPE),
  ...unit(146, "TLW_RX/TLW_RX_PIPE1", "0101000011", "0001011")(TLW_PIPE),
  ...unit(146, "TLW_TX/TLW_TX_PIPE0", "0101100011", "0001100")(TLW_PIPE),
  ...unit(146, "TLW_TX/TLW_TX_PIPE1", "0101100011", "0001101")(TLW_PIPE),
  ...unit(147, "TREX", "0110000100", "0001110")({ "0x00000001": I, "0x80000000": I }),
  ...unit(148, "NVLPW_CTRL/NVLPW", "0000000101", "0001111")({ "0x80000000": I }),
  ...unit(149, "NETIR/NETIR_INT", "0000000110", "0011000")({ any: R }),
  ...Object.entries(LINK_DOWN).flatMap(([linkDown, bucket]) =>
    unit(149, "NETIR_LINK_EVT/NETIR_LINK_DOWN", "0111000110", "0010001", linkDown)({ any: bucket })
  ),
  ...unit(
    149,
    "NETIR_BER_EVENT",
    "1000100110",
    "0010011"
  )({
    "0x00000000": I,
    "0x00000001": I,
    "0x00000002": I,
    "0x00000003": I
  }),
  ...unit(
    149,
    "NETIR_MFDE_EVENT",
    "1001000110",
    "0010100"
  )({
    "0x00000001": R,
    "0x00000003": I,
    "0x00000004": R,
    "0x00000005": R,
    "0x00000007": R
  }),
  ...unit(150, "MSE Degraded", "0000000000", "0000000")({ "0x00000000": R, "0xFFFFFFFF": R }),
  ...unit(150, "MSE_WATCHDOG", "0000000000", "0000000")({ "0x00000000": R })
]

/** Does a 32-bit value fit a 32-character mask (bit 31 first, `-` any)? */
export const fitsMask = (value: number, m: string): boolean => {
  for (let i = 0; i < 32; i++) {
    const want = m[i]
    if (want === "-") continue
    if (((value >>> (31 - i)) & 1) !== (want === "1" ? 1 : 0)) return false
  }
  return true
}

export type Nvlink5Decode =
  | {
      readonly _tag: "Decoded"
      readonly immediate: Nvlink5Bucket
      readonly rows: readonly Nvlink5DecodeRow[]
    }
  /** No row fits, or rows that fit disagree: the table does not decide (the XID stays a Warning). */
  | { readonly _tag: "Undecoded"; readonly rows: readonly Nvlink5DecodeRow[] }

/** The table's bucket for an XID and its first two registers. */
export const decodeNvlink5 = (xid: number, intrInfo: number, errorStatus: number): Nvlink5Decode => {
  const rows = NVLINK5_DECODE.filter(
    (r) =>
      r.xid === xid &&
      (r.errorStatus === undefined || r.errorStatus === errorStatus) &&
      (fitsMask(intrInfo, r.v1) || fitsMask(intrInfo, r.v2))
  )
  const buckets = new Set(rows.map((r) => r.immediate))
  const [only] = buckets
  return buckets.size === 1 && only !== undefined
    ? { _tag: "Decoded", immediate: only, rows }
    : { _tag: "Undecoded", rows }
}

const HEX = /^0x[0-9a-fA-F]{1,8}$/

/**
 * For the log rule (rules/decoders.ts): do the line's `code`, `intrInfo` and `errorStatus` groups decode to
 * RESET_GPU? Anything unreadable is not.
 */
export const nvlink5NeedsReset = (groups: Readonly<Record<string, string>>): boolean => {
  const xid = Number(groups.code)
  const intrInfo = groups.intrInfo ?? ""
  const errorStatus = groups.errorStatus ?? ""
  if (!Number.isInteger(xid) || !HEX.test(intrInfo) || !HEX.test(errorStatus)) return false
  const d = decodeNvlink5(xid, Number.parseInt(intrInfo, 16), Number.parseInt(errorStatus, 16))
  return d._tag === "Decoded" && d.immediate === "RESET_GPU"
}
