/**
 * The failure-domain breaker. Unhealthy nodes concentrated in one zone, across pools, while the other zones are
 * healthy point at the zone's infrastructure (power, network, a storage backend), not at the nodes: replacing them
 * moves load into a sick zone or away from it in a hurry, and makes it worse. Beside the per-pool breaker and the
 * zonal-shift stand-down, a zone whose unhealthy share is above `maxUnhealthyPercent` (with at least
 * `minUnhealthyNodes` unhealthy) while every other zone's is at or below it stands down: no new repair of a node
 * in it. Fail closed, as the zonal-shift gate: while a zone stands down, a node whose zone is unknown (no zone
 * label) stands down too unless `onUnknownZone: proceed`. Needs two zones with nodes: with one, "the others are
 * healthy" says nothing. Unhealthy counts as for the breaker (a policy matches, or a repair is in flight). Pure.
 */
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { ControllerConfig } from "../config/ControllerConfig.ts"

export interface ZoneCount {
  readonly size: number
  readonly unhealthy: number
}

export interface ZoneFigures {
  readonly zone: string
  readonly size: number
  readonly unhealthy: number
  readonly percent: number
}

export type ZoneVerdict =
  | { readonly _tag: "Open" }
  | {
      readonly _tag: "StandDown"
      readonly cause: "concentrated"
      readonly zone: ZoneFigures
      /** Every other zone's figures, each at or below the threshold. */
      readonly others: ReadonlyArray<ZoneFigures>
      readonly maxUnhealthyPercent: number
    }
  | {
      readonly _tag: "StandDown"
      readonly cause: "unknown-zone"
      /** The zones standing down; the node cannot be shown to be outside them. */
      readonly zones: ReadonlyArray<ZoneFigures>
      readonly maxUnhealthyPercent: number
    }

const figures = (zone: string, c: ZoneCount): ZoneFigures => ({
  zone,
  size: c.size,
  unhealthy: c.unhealthy,
  percent: c.size === 0 ? 0 : (100 * c.unhealthy) / c.size
})

/** The zones standing down now, each with the others' figures. */
export const stoodDownZones = (
  config: ControllerConfig,
  zones: ReadonlyMap<string, ZoneCount>
): ReadonlyArray<{ readonly zone: ZoneFigures; readonly others: ReadonlyArray<ZoneFigures> }> => {
  const zb = config.zoneBreaker
  if (!zb.enabled) return []
  const all = [...zones].filter(([, c]) => c.size > 0).map(([z, c]) => figures(z, c))
  if (all.length < 2) return []
  const over = all.filter((z) => z.percent > zb.maxUnhealthyPercent && z.unhealthy >= zb.minUnhealthyNodes)
  // One zone, and only one, crosses the threshold; every other zone stays at or under it. Two sick zones, or a
  // sick fleet, is no single failure domain's fault: the per-pool breakers judge that.
  if (over.length !== 1) return []
  const zone = over[0]!
  if (all.some((z) => z.zone !== zone.zone && z.percent > zb.maxUnhealthyPercent)) return []
  return [{ zone, others: all.filter((z) => z.zone !== zone.zone) }]
}

/** `zone`: the node's proven zone (undefined: unknown), never its label (domain/Placement.ts). */
export const zoneVerdict = (
  config: ControllerConfig,
  zones: ReadonlyMap<string, ZoneCount> | undefined,
  zone: string | undefined
): ZoneVerdict => {
  if (zones === undefined) return { _tag: "Open" }
  const down = stoodDownZones(config, zones)
  if (down.length === 0) return { _tag: "Open" }
  const maxUnhealthyPercent = config.zoneBreaker.maxUnhealthyPercent
  if (zone === undefined || zone === "")
    return config.zoneBreaker.onUnknownZone === "proceed"
      ? { _tag: "Open" }
      : { _tag: "StandDown", cause: "unknown-zone", zones: down.map((d) => d.zone), maxUnhealthyPercent }
  const mine = down.find((d) => d.zone.zone === zone)
  return mine === undefined
    ? { _tag: "Open" }
    : { _tag: "StandDown", cause: "concentrated", zone: mine.zone, others: mine.others, maxUnhealthyPercent }
}

const pct = (p: number) => `${Math.round(p * 10) / 10}%`

export const zoneText = (v: Exclude<ZoneVerdict, { _tag: "Open" }>): string =>
  v.cause === "concentrated"
    ? `zone ${v.zone.zone} has ${v.zone.unhealthy} of ${v.zone.size} nodes unhealthy (${pct(v.zone.percent)}, over ${v.maxUnhealthyPercent}%) while ${v.others.map((o) => `${o.zone} has ${o.unhealthy} of ${o.size} (${pct(o.percent)})`).join(", ")}: the zone, not the nodes, looks at fault; repairs in it stand down`
    : `the node's zone is unknown (neither its owner nor a ${ZONE_LABEL} label names one) while ${v.zones.map((z) => `zone ${z.zone} (${z.unhealthy} of ${z.size} unhealthy, ${pct(z.percent)})`).join(", ")} stands down: it cannot be shown to be outside it; failing closed`
