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

/** A catalog entry, as recorded in api/catalog.lock.json (locks before 1.2.0 lack the optional fields after `parameters`). */
export const LockedEntrySchema = Schema.Struct({
  code: Schema.String,
  conditionType: ConditionTypeSchema,
  severity: SeveritySchema,
  alsoEmittedAs: Schema.optional(SeveritySchema),
  parameters: Schema.Array(Schema.String),
  message: Schema.optional(Schema.String),
  messageParameters: Schema.optional(Schema.Array(Schema.String)),
  recovery: Schema.optional(Schema.Literals(["auto", "reboot"])),
  defaultAction: Schema.optional(RepairActionSchema)
})

const ReasonTemplateParameterSchema = Schema.Struct({
  name: Schema.String,
  type: Schema.Literals(["integer", "string"]),
  description: Schema.String
})

const MonitorNameSchema = Schema.Literals([
  "kernel",
  "container-runtime",
  "networking",
  "storage",
  "nvidia",
  "neuron"
])

/** One catalog entry (see CatalogEntry in the package root). */
export const CatalogEntrySchema = Schema.Struct({
  code: Schema.String.annotate({
    description: "The exact reason string, or a template such as NvidiaXID{code}Error"
  }),
  conditionType: ConditionTypeSchema,
  severity: SeveritySchema,
  monitor: MonitorNameSchema,
  description: Schema.String,
  trigger: Schema.String,
  message: Schema.String.annotate({ description: "The condition/event message, with {placeholders}" }),
  since: Schema.String,
  recovery: Schema.Literals(["auto", "reboot"]),
  defaultAction: RepairActionSchema,
  parameters: Schema.optionalKey(Schema.Array(ReasonTemplateParameterSchema)),
  alsoEmittedAs: Schema.optionalKey(Schema.Struct({ severity: SeveritySchema, when: Schema.String })),
  uncatalogedInNma: Schema.optionalKey(Schema.Boolean)
})

/**
 * The catalog as shipped in `@nodemend/reason-codes/catalog.json`, for automation in other languages;
 * `catalog.schema.json` is this schema as JSON Schema (draft 2020-12).
 */
export const CatalogDocumentSchema = Schema.Struct({
  version: Schema.String,
  conditionTypes: Schema.Array(
    Schema.Struct({
      type: ConditionTypeSchema,
      readyReason: Schema.String,
      readyMessage: Schema.String,
      monitors: Schema.Array(MonitorNameSchema)
    })
  ),
  neuronReady: Schema.Struct({ readyReason: Schema.String, readyMessage: Schema.String }),
  entries: Schema.Array(CatalogEntrySchema),
  fatalXids: Schema.Record(Schema.String, Schema.Literals(["Reboot", "Replace"])).annotate({
    description:
      "XID -> default action; these XIDs give NvidiaXID{code}Error, any other XID NvidiaXID{code}Warning"
  }),
  defaultRepairPolicies: Schema.Array(
    Schema.Struct({
      conditionType: Schema.Union([ConditionTypeSchema, Schema.Literal("Ready")]),
      status: Schema.Literals(["False", "Unknown"]),
      tolerationSeconds: Schema.Int
    })
  ),
  neverRepairConditionTypes: Schema.Array(Schema.String),
  keys: Schema.Array(
    Schema.Struct({
      key: Schema.String,
      kind: Schema.Literals([
        "node-annotation",
        "node-label",
        "node-taint",
        "configmap-label",
        "ec2-tag",
        "event-reporting-controller",
        "event-reason",
        "repair-condition-type",
        "repair-reason"
      ]),
      owner: Schema.Literals(["nodemend", "kubernetes", "aws", "karpenter"]),
      effect: Schema.optionalKey(Schema.String),
      description: Schema.String
    })
  )
}).annotate({ title: "@nodemend/reason-codes catalog" })
export type CatalogDocument = typeof CatalogDocumentSchema.Type
