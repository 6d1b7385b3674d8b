/**
 * `activeZonalShifts` from ARC (ADR 0005): GetManagedResource on the cluster ARN (zonal shifts and autoshifts);
 * when it fails, ListZonalShifts + ListAutoshifts; when both fail, a CloudError (the controller's gate fails
 * closed). Answers are cached for `zonalShift.cacheSeconds`; failures are not. Which shifts count is decided in
 * activeZonalShifts.ts.
 */
import type { AvailabilityZone, EC2Client } from "@aws-sdk/client-ec2"
import { Clock, Effect, Ref, Semaphore } from "effect"
import { CloudError, type ZonalShift } from "../CloudProvider.ts"
import {
  activeFromLists,
  activeFromManagedResource,
  namesMissing,
  type ShiftWindow,
  withZoneNames
} from "./activeZonalShifts.ts"
import type { ArcZonalShiftClientShape } from "./ArcZonalShiftClient.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import type { ZoneNames } from "./ZoneNames.ts"

type Shifts = Effect.Effect<ReadonlyArray<ZonalShift>, CloudError>

/** The shifts in effect for `arn`: GetManagedResource, else the two List calls. */
const readShifts = (
  arc: ArcZonalShiftClientShape,
  arn: string,
  window: ShiftWindow,
  zones: ZoneNames
): Shifts =>
  arc.getManagedResource(arn).pipe(
    Effect.map((res) => activeFromManagedResource(res, window, zones.nameOf)),
    Effect.catch((primary) =>
      Effect.all([arc.listActiveZonalShifts(arn), arc.listActiveAutoshifts], { concurrency: 2 }).pipe(
        Effect.map(([zonal, auto]) => activeFromLists(arn, zonal, auto, window, zones.nameOf)),
        Effect.tap(() =>
          Effect.logWarning(
            "GetManagedResource failed; zonal shifts read from ListZonalShifts/ListAutoshifts",
            {
              error: primary.message
            }
          )
        ),
        Effect.mapError(
          (fallback) =>
            new CloudError({
              operation: "GetManagedResource",
              message: `${primary.message}; fallback also failed: ${fallback.message}`,
              retryable: primary.retryable || fallback.retryable,
              cause: primary
            })
        )
      )
    )
  )

const zonePairs = (zones: ReadonlyArray<AvailabilityZone>) =>
  zones.flatMap((z) => (z.ZoneId && z.ZoneName ? [[z.ZoneId, z.ZoneName] as const] : []))

/**
 * ARC names zones by id. Ids the config does not name are looked up with DescribeAvailabilityZones, once; if that
 * fails the shift still counts, by zone id only.
 */
const makeNameZones = (ec2: EC2Client, zones: ZoneNames) => {
  let described = false
  return (shifts: ReadonlyArray<ZonalShift>): Effect.Effect<ReadonlyArray<ZonalShift>> => {
    if (described || !namesMissing(shifts, zones.nameOf)) return Effect.succeed(shifts)
    return awsCall("DescribeAvailabilityZones", (abortSignal) =>
      ec2.send(new Ec2Sdk.DescribeAvailabilityZonesCommand({}), { abortSignal })
    ).pipe(
      Effect.tap((out) =>
        Effect.sync(() => {
          described = true
          zones.learn(zonePairs(out.AvailabilityZones ?? []))
        })
      ),
      Effect.map(() => withZoneNames(shifts, zones.nameOf)),
      Effect.catch((e) =>
        Effect.logWarning("DescribeAvailabilityZones failed; shifted zones known by id only", {
          error: e.message
        }).pipe(Effect.as(shifts))
      )
    )
  }
}

/** The cached `activeZonalShifts` of the cluster `arn`; one refresh at a time. */
export const makeZonalShifts = Effect.fn("makeZonalShifts")(function* (
  arc: ArcZonalShiftClientShape,
  ec2: EC2Client,
  zones: ZoneNames,
  arn: string,
  cacheSeconds: number
) {
  const cache = yield* Ref.make<
    { readonly at: number; readonly shifts: ReadonlyArray<ZonalShift> } | undefined
  >(undefined)
  const refreshLock = yield* Semaphore.make(1)
  const ttlMs = cacheSeconds * 1000
  const nameZones = makeNameZones(ec2, zones)
  const shifts: Shifts = refreshLock.withPermits(1)(
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const hit = yield* Ref.get(cache)
      if (hit && now - hit.at < ttlMs) return hit.shifts
      const window = { nowMs: now, refreshAtMs: now + ttlMs }
      const fresh = yield* readShifts(arc, arn, window, zones).pipe(Effect.flatMap(nameZones))
      yield* Ref.set(cache, { at: now, shifts: fresh })
      return fresh
    })
  )
  return shifts
})
