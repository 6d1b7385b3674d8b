/**
 * The DCGM connection as a state machine. The monitor reconnects with backoff; `DCGMError` is raised only
 * when the host engine has been unreachable for longer than the grace period (process start counts as the
 * start of an outage, so a host engine that comes up with the node raises nothing), and it resolves as soon
 * as a session is healthy again: it is never latched until restart.
 */
import type { Finding } from "../../model.ts"
import { nvidiaDetection, nvidiaResolution } from "./findings.ts"

export type DcgmConnectionState =
  | { readonly _tag: "Connected"; readonly sinceMs: number }
  | {
      readonly _tag: "Disconnected"
      /** When the outage began. */
      readonly sinceMs: number
      readonly lastError: string
      /** Whether DCGMError has been raised for this outage. */
      readonly raised: boolean
    }

export const initialConnection = (startMs: number): DcgmConnectionState => ({
  _tag: "Disconnected",
  sinceMs: startMs,
  lastError: "not connected yet",
  raised: false
})

export interface Transition {
  readonly state: DcgmConnectionState
  readonly findings: readonly Finding[]
}

/** A connect attempt (or a health check of the session) failed at `nowMs`. */
export const connectionFailed = (
  s: DcgmConnectionState,
  error: string,
  nowMs: number,
  graceMs: number
): Transition => {
  const outage = s._tag === "Connected" ? { sinceMs: nowMs, raised: false } : s
  const due = !outage.raised && nowMs - outage.sinceMs >= graceMs
  return {
    state: { _tag: "Disconnected", sinceMs: outage.sinceMs, lastError: error, raised: outage.raised || due },
    findings: due ? [nvidiaDetection("DCGMError", error, nowMs)] : []
  }
}

/** Whether a failing state should raise once the grace period has passed without a new attempt result. */
export const graceExpired = (s: DcgmConnectionState, nowMs: number, graceMs: number): Transition =>
  s._tag === "Disconnected" ? connectionFailed(s, s.lastError, nowMs, graceMs) : { state: s, findings: [] }

/** A session is open and healthy. */
export const connected = (s: DcgmConnectionState, nowMs: number): Transition => ({
  state: { _tag: "Connected", sinceMs: s._tag === "Connected" ? s.sinceMs : nowMs },
  findings: s._tag === "Disconnected" && s.raised ? [nvidiaResolution("DCGMError", nowMs)] : []
})
