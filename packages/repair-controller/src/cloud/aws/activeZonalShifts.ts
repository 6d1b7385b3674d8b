/**
 * Pure decision: which shifts are in effect. A zonal shift counts while it is APPLIED and its expiry
 * is in the future; an autoshift (no expiry) counts while it is APPLIED (GetManagedResource) or ACTIVE
 * (ListAutoshifts). Unlike Karpenter we read both arrays: an autoshift moves traffic just the same.
 */
import type { ZonalShift } from "../CloudProvider.ts"
import type {
  AutoshiftSummary,
  GetManagedResourceResponse,
  ZonalShiftSummary
} from "./ArcZonalShiftSchemas.ts"

/** Resolves an ARC zone id (`usw2-az1`) to its zone name (`us-west-2a`) when known. */
export type ZoneNameOf = (zoneId: string) => string | undefined

export interface ShiftWindow {
  readonly nowMs: number
  /** Autoshifts have no expiry; they are reported as lasting until the next refresh. */
  readonly refreshAtMs: number
}

const shift = (
  kind: ZonalShift["kind"],
  zoneId: string,
  expiresAtMs: number,
  zoneNameOf: ZoneNameOf,
  id: string | undefined
): ZonalShift => {
  const zone = zoneNameOf(zoneId)
  return {
    kind,
    zoneId,
    expiresAt: new Date(expiresAtMs),
    ...(zone === undefined ? {} : { zone }),
    ...(id === undefined ? {} : { id })
  }
}

export function activeFromManagedResource(
  res: GetManagedResourceResponse,
  window: ShiftWindow,
  zoneNameOf: ZoneNameOf
): ReadonlyArray<ZonalShift> {
  const zonal = res.zonalShifts
    .filter((s) => s.appliedStatus === "APPLIED" && s.expiryTime * 1000 > window.nowMs)
    .map((s) => shift("zonal-shift", s.awayFrom, s.expiryTime * 1000, zoneNameOf, s.zonalShiftId))
  const auto = (res.autoshifts ?? [])
    .filter((s) => s.appliedStatus === "APPLIED")
    .map((s) => shift("autoshift", s.awayFrom, window.refreshAtMs, zoneNameOf, undefined))
  return [...zonal, ...auto]
}

/**
 * Fallback when GetManagedResource cannot answer. `ListZonalShifts` has no applied status, so every
 * ACTIVE unexpired shift of our resource counts (fail toward standing down). `ListAutoshifts` is
 * account-wide: any ACTIVE autoshift away from a zone counts.
 */
export function activeFromLists(
  resourceArn: string,
  zonalShifts: ReadonlyArray<ZonalShiftSummary>,
  autoshifts: ReadonlyArray<AutoshiftSummary>,
  window: ShiftWindow,
  zoneNameOf: ZoneNameOf
): ReadonlyArray<ZonalShift> {
  const zonal = zonalShifts
    .filter(
      (s) =>
        s.resourceIdentifier === resourceArn && s.status === "ACTIVE" && s.expiryTime * 1000 > window.nowMs
    )
    .map((s) => shift("zonal-shift", s.awayFrom, s.expiryTime * 1000, zoneNameOf, s.zonalShiftId))
  const auto = autoshifts
    .filter((s) => s.status === "ACTIVE")
    .map((s) => shift("autoshift", s.awayFrom, window.refreshAtMs, zoneNameOf, undefined))
  return [...zonal, ...auto]
}

/** True when a shift names a zone id whose name is not known yet. */
export const namesMissing = (shifts: ReadonlyArray<ZonalShift>, zoneNameOf: ZoneNameOf): boolean =>
  shifts.some((s) => s.zoneId !== undefined && zoneNameOf(s.zoneId) === undefined)

/** The shifts with the zone names learned since they were read filled in. */
export const withZoneNames = (
  shifts: ReadonlyArray<ZonalShift>,
  zoneNameOf: ZoneNameOf
): ReadonlyArray<ZonalShift> =>
  shifts.map((s) => {
    const zone = s.zoneId === undefined ? undefined : zoneNameOf(s.zoneId)
    return s.zone === undefined && zone !== undefined ? { ...s, zone } : s
  })

/** True when a node (by its zone name and/or zone id labels) sits in a shifted zone. */
export function isZoneShifted(
  shifts: ReadonlyArray<ZonalShift>,
  where: { readonly zone?: string | undefined; readonly zoneId?: string | undefined }
): boolean {
  return shifts.some(
    (s) =>
      (where.zoneId !== undefined && s.zoneId === where.zoneId) ||
      (where.zone !== undefined && s.zone !== undefined && s.zone === where.zone)
  )
}
