/**
 * What a periodic check is. A check reads /proc, /sys or a host command and returns findings; it never
 * talks to the API server. Checks keep their own state (previous samples) in closures created once at
 * start-up, so deltas survive across ticks (NMA pitfall 4: a tracker rebuilt every tick never fires).
 */
import type { MonitorName } from "@nodemend/reason-codes"
import { Data, type Effect } from "effect"
import type { Finding } from "../model.ts"

export class CheckError extends Data.TaggedError("CheckError")<{
  readonly check: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.check}: ${this.detail}`
  }
}

/** Per-tick shared reads: the /proc listing is taken once per tick however many checks use it. */
export interface TickContext {
  readonly pids: Effect.Effect<readonly number[]>
  readonly nowMs: number
}

export interface PeriodicCheck {
  readonly name: string
  readonly monitor: MonitorName
  readonly intervalMs: number
  readonly run: (tick: TickContext) => Effect.Effect<readonly Finding[], CheckError>
}
