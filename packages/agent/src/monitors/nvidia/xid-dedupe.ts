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
}

export const emptyXidDedupe: XidDedupeState = { recent: [] }

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
  windowMs: number = XID_DEDUPE_WINDOW_MS
): { readonly report: boolean; readonly state: XidDedupeState } => {
  const live = state.recent.filter(
    (s) => Math.abs(sighting.atMs - s.atMs) < windowMs || s.atMs > sighting.atMs
  )
  const duplicate = live.some(
    (s) =>
      s.xid === sighting.xid && sameGpu(s.pci, sighting.pci) && Math.abs(sighting.atMs - s.atMs) < windowMs
  )
  return {
    report: !duplicate,
    state: { recent: duplicate ? live : [...live, sighting].slice(-MAX_SIGHTINGS) }
  }
}
