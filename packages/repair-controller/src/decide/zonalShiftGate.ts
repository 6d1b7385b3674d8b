/**
 * Zonal-shift stand-down: while an applied, unexpired zonal shift or autoshift is active, repairs wait.
 * Scope `cluster` stands everything down; scope `zone` only nodes in the shifted zone (a shift that names
 * no zone stands everything down). When the provider cannot answer we fail closed unless told otherwise.
 */
import type { ZonalShift } from "../domain/Instance.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { ZONE_ID_LABEL, ZONE_LABEL } from "@nodemend/reason-codes"
import type { NodeView } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"

/** What the controller last learned from `CloudProvider.activeZonalShifts`. */
export type ShiftObservation =
  | { readonly _tag: "Known"; readonly shifts: ReadonlyArray<ZonalShift> }
  | { readonly _tag: "Unknown"; readonly error: string }

export type GateVerdict =
  | { readonly _tag: "Open" }
  | { readonly _tag: "StandDown"; readonly cause: "shift"; readonly shift: ZonalShift }
  | { readonly _tag: "StandDown"; readonly cause: "unknown"; readonly error: string }

export const activeShifts = (shifts: ReadonlyArray<ZonalShift>, now: number): ReadonlyArray<ZonalShift> =>
  shifts.filter((s) => s.expiresAt.getTime() > now)

const affects = (shift: ZonalShift, node: NodeView): boolean => {
  if (shift.zone === undefined && shift.zoneId === undefined) return true
  const zone = node.labels[ZONE_LABEL]
  const zoneId = node.labels[ZONE_ID_LABEL]
  return (
    (shift.zone !== undefined && shift.zone === zone) ||
    (shift.zoneId !== undefined && shift.zoneId === zoneId)
  )
}

export const gateVerdict = (
  config: ControllerConfig,
  observation: ShiftObservation,
  node: NodeView,
  now: number
): GateVerdict => {
  if (observation._tag === "Unknown")
    return config.zonalShift.onUnknown === "proceed"
      ? { _tag: "Open" }
      : { _tag: "StandDown", cause: "unknown", error: observation.error }
  for (const shift of activeShifts(observation.shifts, now)) {
    if (config.zonalShift.scope === "cluster" || affects(shift, node))
      return { _tag: "StandDown", cause: "shift", shift }
  }
  return { _tag: "Open" }
}

/**
 * The gate for a repair already under way, before an irreversible step (terminate, reboot): a shift that began
 * after the repair started holds it there. The node is judged by the zone the cloud reported for its instance.
 */
export const gateForRepair = (
  config: ControllerConfig,
  observation: ShiftObservation,
  r: RepairRecord,
  now: number
): GateVerdict => {
  const zone = r.node.instance.zone ?? r.node.zone
  const labels = zone === undefined ? r.node.labels : { ...r.node.labels, [ZONE_LABEL]: zone }
  return gateVerdict(
    config,
    observation,
    { name: r.node.name, labels, annotations: {}, conditions: [], deleting: false },
    now
  )
}

/** Zones a replacement must avoid: every zone under an active shift. */
export const shiftedZones = (observation: ShiftObservation, now: number): ReadonlyArray<string> =>
  observation._tag === "Known"
    ? activeShifts(observation.shifts, now).flatMap((s) =>
        [s.zone, s.zoneId].filter((z): z is string => z !== undefined)
      )
    : []

type StandDownVerdict = Extract<GateVerdict, { _tag: "StandDown" }>

/**
 * The NodePool Event's dedupe key: one per shift (its zone and expiry, so an extended shift is news) or for the
 * unanswered query, whatever the number of the pool's nodes behind it.
 */
export const standDownKey = (v: StandDownVerdict): string =>
  v.cause === "shift"
    ? `StandDown/shift/${v.shift.zone ?? v.shift.zoneId ?? "all"}/${v.shift.expiresAt.toISOString()}`
    : "StandDown/unknown"

/** What the NodePool's Event says: which zone is shifted away from, and what lifts the stand-down. */
export const standDownPoolNote = (config: ControllerConfig, v: StandDownVerdict): string => {
  if (v.cause === "unknown")
    return `repairs of this NodePool's nodes stand down: the cloud provider cannot say whether a zonal shift is active (${v.error}); failing closed (zonalShift.onUnknown: standDown) until it answers again`
  const s = v.shift
  const zone = s.zone ?? s.zoneId
  const where = zone === undefined ? "a zone it does not name" : `zone ${zone}`
  const whose =
    config.zonalShift.scope === "zone" && zone !== undefined
      ? `repairs of this NodePool's nodes in ${zone} stand down`
      : "repairs of this NodePool's nodes stand down (zonalShift.scope: cluster)"
  const cancel =
    s.kind === "autoshift"
      ? "when AWS ends the autoshift"
      : `when the shift is cancelled${s.id === undefined ? "" : ` (zonal shift ${s.id})`}`
  const what = s.kind === "autoshift" ? "an autoshift" : "a zonal shift"
  return `${whose}: ${what} moves traffic away from ${where}; it lifts when the shift expires at ${s.expiresAt.toISOString()}, or earlier ${cancel}`
}
