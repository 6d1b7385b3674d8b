/**
 * One XID reaches us up to three ways: the DCGM XID policy callback (which coalesces XIDs within 5 s of
 * field time), the `NVRM: Xid` kernel line (rules engine) and NVML XID events. The same XID on the same GPU
 * within the window is one detection; whichever path reports it first wins.
 *
 * GPUs are matched by PCI address (normalizePci: `dddd:bb:dd`, as the kernel prints it); DCGM's gpuId is mapped to its
 * PCI bus id (field 57) by the monitor. When one side cannot name the GPU, the XID number alone matches:
 * over-merging two GPUs' identical XIDs in 5 s loses nothing (the condition is per node), double-reporting would.
 */

export const XID_DEDUPE_WINDOW_MS = 5000
/**
 * How long a sighting is remembered, by its own time against the newest one seen: a path can report an XID
 * long after it happened (the polled XID history reads a 5-minute window every poll, kernel lines can lag),
 * and that late report must still meet the first one. Longer than the default look-back window plus a poll.
 */
export const XID_RETENTION_MS = 15 * 60_000
/** Bound on remembered sightings (a storm of distinct XIDs must not grow memory). */
const MAX_SIGHTINGS = 256

export interface XidSighting {
  readonly xid: number
  /** Normalized PCI address, or undefined when the path cannot tell. */
  readonly pci: string | undefined
  readonly atMs: number
}

export interface XidDedupeState {
  readonly recent: readonly XidSighting[]
  /** The newest sighting time seen (retention is measured from it). */
  readonly newestMs: number
}

export const emptyXidDedupe: XidDedupeState = { recent: [], newestMs: Number.NEGATIVE_INFINITY }

/**
 * One form for a GPU's PCI address, whoever printed it: NVML's busId and DCGM's field 57 (`00000000:2A:00.0`,
 * eight upper-case domain digits), the kernel's `NVRM: Xid (PCI:0000:2a:00)` (`%04x`, lower case, so a domain
 * above 0xffff prints five or more digits) and NVML's busIdLegacy (`0000:2A:00.0`) all become
 * `dddd:bb:dd` with the domain as a number (`%04x`: never truncated, so domain 0x10000 stays apart from 0).
 * The function is dropped: an XID names the GPU, not a function. Undefined if not a PCI address.
 */
export const normalizePci = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined
  const m = /^(?:PCI:)?([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$/.exec(raw.trim())
  if (m === null) return undefined
  const domain = Number.parseInt(m[1]!, 16).toString(16).padStart(4, "0")
  return `${domain}:${m[2]}:${m[3]}`.toLowerCase()
}

const sameGpu = (a: string | undefined, b: string | undefined) =>
  a === undefined || b === undefined || a === b

/** Whether this sighting is new (report it) and the state after it. */
export const observeXid = (
  state: XidDedupeState,
  sighting: XidSighting,
  windowMs: number = XID_DEDUPE_WINDOW_MS,
  retentionMs: number = XID_RETENTION_MS
): { readonly report: boolean; readonly state: XidDedupeState } => {
  const newestMs = Math.max(state.newestMs, sighting.atMs)
  const live = state.recent.filter((s) => s.atMs > newestMs - retentionMs)
  const duplicate = live.some(
    (s) =>
      s.xid === sighting.xid && sameGpu(s.pci, sighting.pci) && Math.abs(sighting.atMs - s.atMs) < windowMs
  )
  return {
    report: !duplicate,
    state: { recent: duplicate ? live : [...live, sighting].slice(-MAX_SIGHTINGS), newestMs }
  }
}
