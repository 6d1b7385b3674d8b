/**
 * What monitors produce. A monitor never talks to the API server: it emits findings, and the
 * ConditionWriter / EventRecorder turn them into NodeConditions and Events.
 */
import type { ConditionType, MonitorName, Severity } from "@nodemend/reason-codes"

/** A fault seen by a monitor. */
export interface Detection {
  readonly _tag: "Detection"
  readonly monitor: MonitorName
  /** The exact reason code (templates filled in, e.g. `NvidiaXID79Error`). */
  readonly reason: string
  readonly conditionType: ConditionType
  /** After config overrides. `Condition` sets the condition False; `Event` becomes an Event. */
  readonly severity: Severity
  readonly message: string
  /** When the fault was written at its source (kmsg timestamp, journal __REALTIME_TIMESTAMP, poll time), ms since epoch. */
  readonly observedAtMs: number
  /** Distinguishes concurrent faults of the same reason (device, interface, pod...). Optional. */
  readonly subject?: string
}

/** A fault that a monitor saw clear (recovery `auto`): e.g. IPAMD running again, interface up. */
export interface Resolution {
  readonly _tag: "Resolution"
  readonly monitor: MonitorName
  readonly reason: string
  readonly conditionType: ConditionType
  readonly subject?: string
  readonly observedAtMs: number
}

export type Finding = Detection | Resolution
