/**
 * Effect Schema for the external shapes of this package. A subpath export, so the package root keeps
 * zero runtime dependencies: `import { NodeConditionSchema } from "@nodemend/reason-codes/schema"`.
 */
import { Schema } from "effect"
import { CONDITION_TYPES } from "./types.ts"

export const ConditionTypeSchema = Schema.Literals(CONDITION_TYPES)
export const ConditionStatusSchema = Schema.Literals(["True", "False", "Unknown"])
export const SeveritySchema = Schema.Literals(["Condition", "Event"])
export const RepairActionSchema = Schema.Literals(["Replace", "Reboot", "None"])

/** A Kubernetes NodeCondition as it arrives from the API server. */
export const NodeConditionSchema = Schema.Struct({
  type: Schema.String.check(Schema.isNonEmpty()),
  status: ConditionStatusSchema,
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  lastTransitionTime: Schema.optional(Schema.String),
  lastHeartbeatTime: Schema.optional(Schema.String)
})
export type NodeCondition = typeof NodeConditionSchema.Type

/** A catalog entry, as recorded in api/catalog.lock.json. */
export const LockedEntrySchema = Schema.Struct({
  code: Schema.String,
  conditionType: ConditionTypeSchema,
  severity: SeveritySchema,
  alsoEmittedAs: Schema.optional(SeveritySchema)
})
