/**
 * Shapes of the ARC zonal shift REST-JSON responses we read (API version 2022-10-30).
 * Timestamps arrive as epoch seconds (the restJson1 default). Unknown fields are ignored, so new
 * AWS fields never break decoding; a missing required field is a decode error (CloudError).
 */
import { Schema } from "effect"

const EpochSeconds = Schema.Finite
const AppliedStatus = Schema.Literals(["APPLIED", "NOT_APPLIED"])

/** `GetManagedResource` -> `zonalShifts[]` (customer shifts, practice runs, FIS experiments). */
export const ZonalShiftInResource = Schema.Struct({
  appliedStatus: AppliedStatus,
  awayFrom: Schema.String,
  expiryTime: EpochSeconds,
  startTime: EpochSeconds,
  zonalShiftId: Schema.String,
  resourceIdentifier: Schema.optionalKey(Schema.String),
  comment: Schema.optionalKey(Schema.String),
  shiftType: Schema.optionalKey(Schema.String),
  practiceRunOutcome: Schema.optionalKey(Schema.String)
})
export type ZonalShiftInResource = typeof ZonalShiftInResource.Type

/** `GetManagedResource` -> `autoshifts[]`: AWS-started shifts; they have no expiry time. */
export const AutoshiftInResource = Schema.Struct({
  appliedStatus: AppliedStatus,
  awayFrom: Schema.String,
  startTime: EpochSeconds
})
export type AutoshiftInResource = typeof AutoshiftInResource.Type

export const GetManagedResourceResponse = Schema.Struct({
  arn: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  zonalShifts: Schema.Array(ZonalShiftInResource),
  autoshifts: Schema.optionalKey(Schema.Array(AutoshiftInResource)),
  appliedWeights: Schema.optionalKey(Schema.Record(Schema.String, Schema.Finite)),
  zonalAutoshiftStatus: Schema.optionalKey(Schema.String)
})
export type GetManagedResourceResponse = typeof GetManagedResourceResponse.Type

/** `ListZonalShifts` items (`ZonalShiftSummary`). */
export const ZonalShiftSummary = Schema.Struct({
  awayFrom: Schema.String,
  expiryTime: EpochSeconds,
  startTime: EpochSeconds,
  resourceIdentifier: Schema.String,
  status: Schema.Literals(["ACTIVE", "EXPIRED", "CANCELED"]),
  zonalShiftId: Schema.String,
  comment: Schema.optionalKey(Schema.String),
  shiftType: Schema.optionalKey(Schema.String),
  practiceRunOutcome: Schema.optionalKey(Schema.String)
})
export type ZonalShiftSummary = typeof ZonalShiftSummary.Type

export const ListZonalShiftsResponse = Schema.Struct({
  items: Schema.Array(ZonalShiftSummary),
  nextToken: Schema.optionalKey(Schema.String)
})

/** `ListAutoshifts` items (`AutoshiftSummary`); account-wide, not per resource. */
export const AutoshiftSummary = Schema.Struct({
  awayFrom: Schema.String,
  startTime: EpochSeconds,
  endTime: Schema.optionalKey(EpochSeconds),
  status: Schema.Literals(["ACTIVE", "COMPLETED"])
})
export type AutoshiftSummary = typeof AutoshiftSummary.Type

export const ListAutoshiftsResponse = Schema.Struct({
  items: Schema.Array(AutoshiftSummary),
  nextToken: Schema.optionalKey(Schema.String)
})

/** Error bodies: `{"message": "..."}`; the error code travels in the `x-amzn-ErrorType` header. */
export const ArcErrorBody = Schema.Struct({
  message: Schema.optionalKey(Schema.String),
  Message: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String)
})
