/**
 * The pure heart of the ConditionWriter: which faults are active per condition type, what the five
 * NodeConditions should therefore say, and the smallest strategic-merge patch that gets the Node there.
 * No I/O and no clock: callers pass `now` and the boot id.
 *
 * Boot id: a False condition's message ends with ` [boot-id=<id>]`, the boot (from
 * `/proc/sys/kernel/random/boot_id`) during which the fault was seen. On agent start, a False condition
 * from the same boot is kept; one from an earlier boot is reset to True, because every fault clears on
 * reboot at the latest. A False condition of ours without the marker (hand-written, or an older agent)
 * is kept and adopted into the current boot: a fault is never forgotten without evidence of a reboot.
 * The marker lives in the message, not in a Node annotation, so that one status patch carries both and
 * the agent needs no `nodes patch` permission.
 */
import {
  CONDITION_TYPE_INFO,
  CONDITION_TYPES,
  resolveReason,
  type ConditionType,
  type Recovery
} from "@nodemend/reason-codes"
import type { Detection, Finding, Resolution } from "../model.ts"

export const MAX_MESSAGE_BYTES = 1024
/** Faults remembered per condition type; beyond it the oldest are forgotten (the condition stays False). */
export const MAX_FAULTS_PER_TYPE = 32

export interface ActiveFault {
  readonly reason: string
  /** "" when the monitor did not name a subject. */
  readonly subject: string
  readonly message: string
  readonly recovery: Recovery
  readonly observedAtMs: number
  /** Read back from the Node at start-up: the message is already rendered and the subject unknown. */
  readonly restored: boolean
}

export type ConditionState = ReadonlyMap<ConditionType, readonly ActiveFault[]>

export interface DesiredCondition {
  readonly type: ConditionType
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
}

/** A NodeCondition as read from the API server (client-node gives Dates, raw JSON gives strings). */
export interface CurrentCondition {
  readonly type?: string
  readonly status?: string
  readonly reason?: string
  readonly message?: string
  readonly lastHeartbeatTime?: Date | string
  readonly lastTransitionTime?: Date | string
}

export type ConditionPatchEntry =
  | {
      readonly type: ConditionType
      readonly status: "True" | "False"
      readonly reason: string
      readonly message: string
      readonly lastHeartbeatTime: string
      readonly lastTransitionTime: string
    }
  | { readonly type: ConditionType; readonly $patch: "delete" }

/** What to show for a True condition (AcceleratedHardwareReady differs between NVIDIA and Neuron). */
export type ReadyTexts = ReadonlyMap<ConditionType, { readonly reason: string; readonly message: string }>

export const DEFAULT_READY_TEXTS: ReadyTexts = new Map(
  CONDITION_TYPE_INFO.map((c) => [c.type, { reason: c.readyReason, message: c.readyMessage }] as const)
)

const BOOT_MARKER = /\s?\[boot-id=([^\]\s]*)\]$/

export const bootMarker = (bootId: string): string => ` [boot-id=${bootId}]`

/** Splits a message we wrote into its text and the boot id marker (undefined when absent). */
export const parseBootMarker = (
  message: string
): { readonly text: string; readonly bootId: string | undefined } => {
  const m = BOOT_MARKER.exec(message)
  return m === null ? { text: message, bootId: undefined } : { text: message.slice(0, m.index), bootId: m[1] }
}

export const recoveryOf = (reason: string): Recovery => resolveReason(reason)?.entry.recovery ?? "auto"

export const emptyState: ConditionState = new Map()

/** Seeds the state from the Node's conditions at agent start (see the module comment for the boot rule). */
export const restoreState = (
  managed: ReadonlySet<ConditionType>,
  current: readonly CurrentCondition[],
  bootId: string,
  nowMs: number
): ConditionState => {
  const state = new Map<ConditionType, readonly ActiveFault[]>()
  for (const c of current) {
    const type = c.type as ConditionType
    if (!managed.has(type) || c.status !== "False" || typeof c.reason !== "string" || c.reason === "")
      continue
    const { text, bootId: writtenIn } = parseBootMarker(c.message ?? "")
    if (writtenIn !== undefined && writtenIn !== bootId) continue // an earlier boot: the fault is gone
    state.set(type, [
      {
        reason: c.reason,
        subject: "",
        message: text,
        recovery: recoveryOf(c.reason),
        observedAtMs: nowMs,
        restored: true
      }
    ])
  }
  return state
}

const addDetection = (state: ConditionState, d: Detection): ConditionState => {
  if (d.severity !== "Condition") return state
  const subject = d.subject ?? ""
  const kept = (state.get(d.conditionType) ?? []).filter(
    (f) => !(f.reason === d.reason && f.subject === subject)
  )
  const fault: ActiveFault = {
    reason: d.reason,
    subject,
    message: d.message,
    recovery: recoveryOf(d.reason),
    observedAtMs: d.observedAtMs,
    restored: false
  }
  const next = new Map(state)
  next.set(d.conditionType, [...kept, fault].slice(-MAX_FAULTS_PER_TYPE))
  return next
}

const addResolution = (state: ConditionState, r: Resolution): ConditionState => {
  const faults = state.get(r.conditionType)
  if (faults === undefined) return state
  const cleared = (f: ActiveFault) =>
    f.reason === r.reason &&
    f.recovery === "auto" &&
    (r.subject === undefined || f.restored || f.subject === (r.subject ?? ""))
  const kept = faults.filter((f) => !cleared(f))
  if (kept.length === faults.length) return state
  const next = new Map(state)
  if (kept.length === 0) next.delete(r.conditionType)
  else next.set(r.conditionType, kept)
  return next
}

/**
 * One finding into the state. Event-severity detections do not touch conditions. A resolution clears an
 * `auto`-recovery fault of that reason (and subject, when it names one); a `reboot` fault stays until the
 * boot id changes.
 */
export const applyFinding = (state: ConditionState, finding: Finding): ConditionState =>
  finding._tag === "Detection" ? addDetection(state, finding) : addResolution(state, finding)

const bytes = (s: string): number => Buffer.byteLength(s, "utf8")

const truncateBytes = (s: string, max: number): string => {
  if (bytes(s) <= max) return s
  let out = s.slice(0, max)
  while (bytes(`${out}…`) > max) out = out.slice(0, -1)
  return `${out}…`
}

/** Newest fault first, distinct texts only, bounded to MAX_MESSAGE_BYTES including the boot marker. */
export const renderMessage = (faults: readonly ActiveFault[], bootId: string): string => {
  const suffix = bootMarker(bootId)
  const budget = MAX_MESSAGE_BYTES - bytes(suffix)
  const texts: string[] = []
  for (const f of [...faults].reverse()) {
    const text = f.restored ? f.message : `${f.reason}: ${f.message}`
    if (!texts.includes(text)) texts.push(text)
  }
  let out = ""
  let shown = 0
  for (const text of texts) {
    const more = texts.length - shown - 1
    const tail = more > 0 ? ` (+${more} more)` : ""
    const candidate = shown === 0 ? text : `${out}; ${text}`
    if (bytes(candidate + tail) > budget) break
    out = candidate
    shown++
  }
  if (shown === 0)
    out = truncateBytes(
      texts[0] ?? "",
      budget - bytes(texts.length > 1 ? ` (+${texts.length - 1} more)` : "")
    )
  if (shown === 0) shown = 1
  const hidden = texts.length - shown
  return `${out}${hidden > 0 ? ` (+${hidden} more)` : ""}${suffix}`
}

/** The condition each managed type should show now. */
export const desiredConditions = (
  state: ConditionState,
  managed: ReadonlySet<ConditionType>,
  bootId: string,
  ready: ReadyTexts = DEFAULT_READY_TEXTS
): ReadonlyMap<ConditionType, DesiredCondition> => {
  const out = new Map<ConditionType, DesiredCondition>()
  for (const type of CONDITION_TYPES) {
    if (!managed.has(type)) continue
    const faults = state.get(type) ?? []
    const latest = faults.at(-1)
    if (latest === undefined) {
      const r = ready.get(type) ?? DEFAULT_READY_TEXTS.get(type)!
      out.set(type, { type, status: "True", reason: r.reason, message: r.message })
    } else {
      out.set(type, { type, status: "False", reason: latest.reason, message: renderMessage(faults, bootId) })
    }
  }
  return out
}

const iso = (t: Date | string | undefined): string | undefined =>
  t === undefined ? undefined : t instanceof Date ? t.toISOString() : t

/** Condition times are second-precision on the wire: "2026-01-01T00:00:00Z". */
export const formatConditionTime = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z")

/**
 * The strategic-merge entries for `status.conditions` (merge key `type`) that move the Node from
 * `current` to `desired`: a changed condition, a due heartbeat, or a `$patch: delete` for a type of ours
 * that is no longer managed. Types outside nodemend's five are never touched. Empty means "no write".
 * `lastTransitionTime` is kept whenever the status does not change.
 */
export const conditionPatch = (
  desired: ReadonlyMap<ConditionType, DesiredCondition>,
  current: readonly CurrentCondition[],
  nowMs: number,
  heartbeatMs: number
): readonly ConditionPatchEntry[] => {
  const now = formatConditionTime(nowMs)
  const entries: ConditionPatchEntry[] = []
  for (const type of CONDITION_TYPES) {
    const c = current.find((x) => x.type === type)
    const d = desired.get(type)
    if (d === undefined) {
      if (c !== undefined) entries.push({ type, $patch: "delete" })
      continue
    }
    const changed =
      c === undefined || c.status !== d.status || c.reason !== d.reason || c.message !== d.message
    const lastBeat = iso(c?.lastHeartbeatTime)
    const heartbeatDue = lastBeat === undefined || nowMs - Date.parse(lastBeat) >= heartbeatMs
    if (!changed && !heartbeatDue) continue
    const since = iso(c?.lastTransitionTime)
    entries.push({
      type,
      status: d.status,
      reason: d.reason,
      message: d.message,
      lastHeartbeatTime: now,
      lastTransitionTime: c !== undefined && c.status === d.status && since !== undefined ? since : now
    })
  }
  return entries
}

/** When the next heartbeat falls due, given the conditions as last written (ms since epoch). */
export const nextHeartbeatAt = (
  current: readonly CurrentCondition[],
  heartbeatMs: number
): number | undefined => {
  const beats = current
    .filter((c) => (CONDITION_TYPES as readonly string[]).includes(c.type ?? ""))
    .map((c) => Date.parse(iso(c.lastHeartbeatTime) ?? ""))
    .filter((t) => Number.isFinite(t))
  return beats.length === 0 ? undefined : Math.min(...beats) + heartbeatMs
}
