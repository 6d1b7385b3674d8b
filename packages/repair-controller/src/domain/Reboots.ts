/**
 * The controller's memory of the Reboot repairs that ended well: per node name and condition type, the last one's
 * end. Escalation (decide/escalation.ts) reads it: a fault that comes back on a rebooted node within a window is
 * repaired by Replace the next time. Kept in one ConfigMap of the controller's namespace (`nodemend-reboots`,
 * controller/RebootStore.ts), which no node can write (ADR 0009), so a restart keeps it. Times are epoch ms.
 */
import { Result, Schema } from "effect"

/** The ConfigMap in the controller's namespace that holds the reboots. */
export const REBOOTS_CONFIGMAP = "nodemend-reboots"

export const RebootMarkSchema = Schema.Struct({
  node: Schema.String,
  /** The machine, as the repair proved it (the record's providerID): a new machine under the name is another node. */
  providerID: Schema.String,
  /** The Node object rebooted: evidence only (a Node re-created under its name on the same machine is the same). */
  uid: Schema.String,
  conditionType: Schema.String,
  reason: Schema.String,
  repairId: Schema.String,
  /** When the reboot repair ended (the node healthy and untainted). */
  at: Schema.Finite
})
export type RebootMark = typeof RebootMarkSchema.Type

const RebootsSchema = Schema.Struct({ v: Schema.Literal(1), reboots: Schema.Array(RebootMarkSchema) })

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(RebootsSchema))

export const parseReboots = (text: string): Result.Result<ReadonlyArray<RebootMark>, string> => {
  const r = decodeJson(text)
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success.reboots)
}

export const serializeReboots = (marks: ReadonlyArray<RebootMark>): string =>
  JSON.stringify({ v: 1, reboots: marks })

/**
 * The marks with `mark` in: one per node name and condition type (the newest), those older than `keepMs` before
 * `now` dropped, at most `cap` (the newest).
 */
export const withMark = (
  marks: ReadonlyArray<RebootMark>,
  mark: RebootMark,
  now: number,
  keepMs: number,
  cap: number
): ReadonlyArray<RebootMark> =>
  [...marks.filter((m) => !(m.node === mark.node && m.conditionType === mark.conditionType)), mark]
    .filter((m) => m.at + keepMs >= now)
    .sort((a, b) => a.at - b.at)
    .slice(-cap)
