/**
 * The controller's journal of planned repairs (EC2 scheduled events, ADR 0018), in one ConfigMap of its namespace
 * (`nodemend-planned-repairs`), which only the controller writes (ADR 0009):
 * - `acted`: the events a repair was started for (its record written). A restarted controller plans them no more:
 *   EC2 keeps a system-reboot listed until its own reboot, so without the mark a rebooted node would be rebooted again.
 * - `plans`: each node's plan as the controller last decided it (event, NotBefore, when the repair will start, what
 *   holds it): what `kubectl nodemend status` and `timeline` show, read from the controller, not from the node.
 * Times are epoch ms.
 */
import { Result, Schema } from "effect"

/** The ConfigMap in the controller's namespace that holds them. */
export const PLANNED_REPAIRS_CONFIGMAP = "nodemend-planned-repairs"

/** EC2 lists an ended event for up to a week: a mark is kept that long past the event's window. */
export const ACTED_KEEP_MS = 7 * 24 * 3600_000

const Ms = Schema.Finite

export const ActedMarkSchema = Schema.Struct({
  eventId: Schema.String,
  node: Schema.String,
  code: Schema.String,
  notBefore: Ms,
  notAfter: Schema.optionalKey(Ms),
  /** The repair started for it. */
  repairId: Schema.String,
  at: Ms
})
export type ActedMark = typeof ActedMarkSchema.Type

export const PlanViewSchema = Schema.Struct({
  node: Schema.String,
  eventId: Schema.String,
  code: Schema.String,
  reason: Schema.String,
  action: Schema.String,
  notBefore: Ms,
  notAfter: Schema.optionalKey(Ms),
  /** When the repair is due to start (NotBefore - lead, or the opening of the pool's maintenance window). */
  dueAt: Ms,
  /** Waiting for `dueAt`; or due and held by a gate (`heldBy` says which and what lifts it). */
  state: Schema.Literals(["waiting", "held"]),
  heldBy: Schema.optionalKey(Schema.String),
  /** The plan in words (decide/scheduledEvents.ts planText). */
  text: Schema.String,
  /** When the controller decided it last. */
  at: Ms
})
export type PlanView = typeof PlanViewSchema.Type

const ActedSchema = Schema.Struct({ v: Schema.Literal(1), acted: Schema.Array(ActedMarkSchema) })
const PlansSchema = Schema.Struct({ v: Schema.Literal(1), plans: Schema.Array(PlanViewSchema) })
const decodeActed = Schema.decodeUnknownResult(Schema.fromJsonString(ActedSchema))
const decodePlans = Schema.decodeUnknownResult(Schema.fromJsonString(PlansSchema))

export const parseActed = (text: string): Result.Result<ReadonlyArray<ActedMark>, string> => {
  const r = decodeActed(text)
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success.acted)
}

export const parsePlans = (text: string): Result.Result<ReadonlyArray<PlanView>, string> => {
  const r = decodePlans(text)
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success.plans)
}

export const serializeActed = (marks: ReadonlyArray<ActedMark>): string =>
  JSON.stringify({ v: 1, acted: marks })

export const serializePlans = (plans: ReadonlyArray<PlanView>): string => JSON.stringify({ v: 1, plans })

/** The marks with `mark` in (one per event), those whose event's window ended ACTED_KEEP_MS before `now` dropped. */
export const withActed = (
  marks: ReadonlyArray<ActedMark>,
  mark: ActedMark,
  now: number
): ReadonlyArray<ActedMark> =>
  [...marks.filter((m) => m.eventId !== mark.eventId), mark].filter(
    (m) => (m.notAfter ?? m.notBefore) + ACTED_KEEP_MS >= now
  )
