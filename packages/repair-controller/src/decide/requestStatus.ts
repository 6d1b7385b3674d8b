/**
 * What a RepairRequest's status says of the decision about its node (ADR 0020): Held with what lifts it (contract
 * 9), Accepted while its node's proofs are asked, Refused for good. Pure; the Started and Done phases are written
 * where the repair starts and ends (controller/repairRequests.ts).
 */
import type { Decision } from "./decide.ts"
import { placeText } from "./order.ts"
import { holdText } from "./relapse.ts"
import { zoneText } from "./zoneBreaker.ts"

/** A request's phases (the CRD's status.phase enum). */
export type RequestPhase = "Accepted" | "Held" | "Started" | "Done" | "Refused"

export interface RequestStatus {
  readonly phase: RequestPhase
  /** The decision behind the phase (Blocked, Queued, Held, ...). */
  readonly reason: string
  readonly message: string
}

const iso = (t: number) => new Date(t).toISOString()
const scopeName = (scope: string) => (scope === "<cluster>" ? "the cluster" : `pool ${scope}`)

const held = (reason: string, message: string): RequestStatus => ({
  phase: "Held",
  reason,
  message: message.slice(0, 1000)
})

/** The status for a decision that starts no repair. */
export const requestStatusOf = (d: Exclude<Decision, { _tag: "Repair" }>): RequestStatus => {
  switch (d._tag) {
    case "Healthy":
    case "ReportOnly":
      return { phase: "Refused", reason: d._tag, message: "nothing to repair: no action applies" }
    case "Tolerating":
      return held(
        "Tolerating",
        `${d.governing.conditionType} (${d.governing.reason}) governs the node and is not due yet`
      )
    case "Vetoed":
      return held(
        "Vetoed",
        d.veto === "paused"
          ? "repairs are paused (config paused: true); lifts when the controller is unpaused"
          : d.veto === "node-annotation"
            ? "the node is annotated nodemend.io/do-not-repair=true; lifts when the annotation is removed"
            : d.veto === "nodepool-annotation"
              ? "its NodePool is annotated nodemend.io/do-not-repair=true; lifts when the annotation is removed"
              : "its pool is excluded from repair (doNotRepairPools or pools.<pool>.doNotRepair); lifts when the config allows it"
      )
    case "StandDown":
      return held(
        "StandDown",
        d.gate.cause === "shift"
          ? `a ${d.gate.shift.kind} away from ${d.gate.shift.zone ?? d.gate.shift.zoneId ?? "a zone"} is active; lifts when it ends (expires ${d.gate.shift.expiresAt.toISOString()}) or is cancelled`
          : `the cloud cannot say whether a zonal shift is active (${d.gate.error}); lifts when it answers again`
      )
    case "ZoneStandDown":
      return held(
        "ZoneStandDown",
        `${zoneText(d.zone)}; lifts when the zone's share of unhealthy nodes falls`
      )
    case "Unsettled":
      return { phase: "Accepted", reason: "Unsettled", message: `deciding: ${d.why}` }
    case "Unplaced":
      return {
        phase: "Refused",
        reason: "Unplaced",
        message: `its machine is not proven to be this node: ${d.why}`
      }
    case "Held":
      return held(
        "RelapseHold",
        `${holdText(d.held)}. Lifts at ${iso(d.held.until)} if nothing relapses before, or now with kubectl nodemend release ${d.scope === "<cluster>" ? "'<cluster>'" : d.scope} ${d.held.reason}`
      )
    case "Blocked": {
      const b = d.breaker
      return held(
        "Blocked",
        `the breaker of ${scopeName(b.scope)} is open: ${b.unhealthy} of ${b.size} nodes are unhealthy, more than ${b.percent}% (allowed ${b.allowed}); lifts when at most ${b.allowed} are`
      )
    }
    case "Queued":
      return held(
        "Queued",
        `waiting for a slot: ${d.inFlight} repairs in flight in ${scopeName(d.scope)}, allowed ${d.budget.allowed} by ${d.budget.source}; lifts when a repair there ends${d.budget.until !== undefined ? ` or the budget's window ends at ${iso(d.budget.until)}` : ""}; queue ${placeText(d.waiting, d.place)}`
      )
    case "WouldRepair":
      return held(
        "DryRun",
        `dry-run: would ${d.governing.action} the node; lifts when the controller runs with dryRun: false`
      )
  }
}
