/**
 * One XID reaches us up to three ways: the DCGM XID policy callback (which coalesces XIDs within 5 s of
 * field time), the `NVRM: Xid` kernel line (rules engine) and NVML XID events. The same XID on the same GPU
 * within the window is one detection; whichever path reports it first wins.
 *
 * GPUs are matched by PCI address (`dddd:bb:dd`, as the kernel prints it); DCGM's gpuId is mapped to its
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

/** `00000000:2A:00.0` (DCGM), `0000:2a:00` (kernel), `0000:2a:00.0` -> `0000:2a:00`; undefined if not a BDF. */
export const normalizePci = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined
  const m = /^(?:PCI:)?([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$/.exec(raw.trim())
  if (m === null) return undefined
  return `${m[1]!.slice(-4)}:${m[2]}:${m[3]}`.toLowerCase()
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
