/**
 * The whole plan for a repair's next step, pure. Every gate is an input: the live Node (a repair acts only on the
 * Node it started on), the phase deadline, taints first (a wave's taints before any repair's later steps), the
 * drain slot, and a zonal shift before an irreversible step; the answer is the action, a hold and its cause, or the
 * record ended. The runner carries it out.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { liveNodeMismatch } from "../decide/identity.ts"
import { type GateVerdict, gateForRepair, type ShiftObservation } from "../decide/zonalShiftGate.ts"
import type { NodeView } from "../domain/NodeView.ts"
import { needsLiveNode, type RepairRecord } from "../domain/RepairRecord.ts"
import { failed, overdue } from "./budget.ts"
import { type Action, nextAction } from "./stateMachine.ts"

/** The prefix of a failure that says the Node is another object now: its record is cleared, not kept. */
export const NOT_THE_SAME_NODE = "the Node is not the one this repair started on"

/** What the world says now, as the runner read it. */
export interface Gates {
  /** The Node under the repair's name, as the informer has it. */
  readonly liveNode: NodeView | undefined
  /** How long the steps after a taint wait for the taints of a wave being written (TaintFirst); 0: go. */
  readonly taintHoldMs: number
  /** Whether this repair holds a drain slot (DrainPool). */
  readonly drainSlot: boolean
  /** What the controller last learned of zonal shifts. */
  readonly shifts: ShiftObservation
}

export type Step =
  | { readonly _tag: "Act"; readonly action: Action }
  /** The repair ends here (its Node is another object, or its phase is overdue). */
  | { readonly _tag: "End"; readonly record: RepairRecord }
  | { readonly _tag: "Hold"; readonly cause: "taintFirst" | "evictionBackoff"; readonly retryAfterMs: number }
  /** Parked until a drain slot is handed to it. */
  | { readonly _tag: "Hold"; readonly cause: "drainSlot" }
  /**
   * A zonal shift (or a cloud that cannot say) holds the repair before its irreversible step: no termination or
   * reboot while it lasts; the node stays tainted and drained and the phase deadline still runs.
   */
  | {
      readonly _tag: "Hold"
      readonly cause: "zonalShift"
      readonly gate: Exclude<GateVerdict, { readonly _tag: "Open" }>
    }

/**
 * When evictions are tried again after blocked rounds: initial x 2^(rounds-1), capped; never past the drain
 * deadline that falls within the backoff (the deadline is acted on when it passes, not at the next tick).
 */
export const evictionResumesAt = (r: RepairRecord, config: ControllerConfig): number | undefined => {
  if (r.evictionBlocked === undefined) return undefined
  const at = Date.parse(r.evictionBlocked.at)
  const { evictionBackoffInitialMs: initial, evictionBackoffMaxMs: max } = config.drain
  const resumes = at + Math.min(initial * 2 ** Math.max(0, r.evictionBlocked.rounds - 1), max)
  const deadline = r.drainDeadline === undefined ? undefined : Date.parse(r.drainDeadline)
  return deadline !== undefined && deadline > at ? Math.min(resumes, deadline) : resumes
}

export const planStep = (r: RepairRecord, config: ControllerConfig, now: number, gates: Gates): Step => {
  const mismatch = needsLiveNode(r) ? liveNodeMismatch(r, gates.liveNode) : undefined
  if (mismatch !== undefined)
    return { _tag: "End", record: failed(r, `${NOT_THE_SAME_NODE}: ${mismatch}; not acting on it`, now) }
  const late = overdue(r, config, now)
  if (late !== undefined) return { _tag: "End", record: late }
  const action = nextAction(r, config, now)
  if (action._tag !== "Taint" && action._tag !== "Done" && gates.taintHoldMs > 0)
    return { _tag: "Hold", cause: "taintFirst", retryAfterMs: gates.taintHoldMs }
  if ((action._tag === "Drain" || action._tag === "ForceDrain") && !gates.drainSlot)
    return { _tag: "Hold", cause: "drainSlot" }
  if (action._tag === "Drain") {
    const resumesAt = evictionResumesAt(r, config)
    if (resumesAt !== undefined && now < resumesAt)
      return { _tag: "Hold", cause: "evictionBackoff", retryAfterMs: resumesAt - now }
  }
  if (action._tag === "Terminate" || action._tag === "Reboot") {
    const gate = gateForRepair(config, gates.shifts, r, now)
    if (gate._tag === "StandDown") return { _tag: "Hold", cause: "zonalShift", gate }
  }
  return { _tag: "Act", action }
}
