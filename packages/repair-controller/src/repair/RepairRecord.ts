/**
 * The repair record: written on the Node (annotation `nodemend.io/repair`) before every action, and from
 * the termination step on also in a journal ConfigMap, because terminating the instance removes the Node.
 * A restarted controller resumes from it exactly where it stopped.
 */
import { Result, Schema } from "effect"

export const PHASES = [
  "Tainting",
  "Draining",
  "CapturingLogs",
  "Rebooting",
  "Terminating",
  "RemovingNode",
  "Replacing",
  "Untainting",
  "Succeeded",
  "Failed"
] as const
export type Phase = (typeof PHASES)[number]

const Iso = Schema.String

export const RepairRecordSchema = Schema.Struct({
  v: Schema.Literal(1),
  /** Unique per repair; the idempotency token for launches. */
  id: Schema.String,
  phase: Schema.Literals(PHASES),
  action: Schema.Literals(["Replace", "Reboot"]),
  /** Set when a reboot did not clear the condition and the repair became a replacement. */
  escalatedFrom: Schema.optionalKey(Schema.Literal("Reboot")),
  conditionType: Schema.String,
  conditionStatus: Schema.String,
  reason: Schema.String,
  startedAt: Iso,
  drainMode: Schema.Literals(["force", "wait"]),
  drainDeadlineMs: Schema.Finite,
  drainStartedAt: Schema.optionalKey(Iso),
  drainDeadline: Schema.optionalKey(Iso),
  drainDeadlinePassed: Schema.optionalKey(Schema.Boolean),
  captureLogs: Schema.Boolean,
  logsCaptured: Schema.optionalKey(Schema.Literals(["captured", "timed-out", "skipped", "failed"])),
  rebootRequestedAt: Schema.optionalKey(Iso),
  terminateRequestedAt: Schema.optionalKey(Iso),
  instanceGoneAt: Schema.optionalKey(Iso),
  replacementRequestedAt: Schema.optionalKey(Iso),
  replacement: Schema.optionalKey(
    Schema.Struct({
      instanceId: Schema.String,
      nodeName: Schema.optionalKey(Schema.String),
      zone: Schema.optionalKey(Schema.String)
    })
  ),
  finishedAt: Schema.optionalKey(Iso),
  failure: Schema.optionalKey(Schema.String),
  /** The node as it was when the repair started: what the replacement is built from once the Node is gone. */
  node: Schema.Struct({
    name: Schema.String,
    uid: Schema.optionalKey(Schema.String),
    providerID: Schema.String,
    pool: Schema.optionalKey(Schema.String),
    zone: Schema.optionalKey(Schema.String),
    labels: Schema.Record(Schema.String, Schema.String)
  })
})
export type RepairRecord = typeof RepairRecordSchema.Type

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(RepairRecordSchema))

/** Parses an annotation or journal value; a malformed record is reported, never guessed at. */
export const parseRecord = (text: string): Result.Result<RepairRecord, string> => {
  const r = decodeJson(text)
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success)
}

export const serializeRecord = (r: RepairRecord): string => JSON.stringify(r)

export const isTerminal = (r: RepairRecord): boolean => r.phase === "Succeeded" || r.phase === "Failed"

/** From Terminating on the Node may vanish, so the record must also live in the journal. */
export const needsJournal = (r: RepairRecord): boolean =>
  r.phase === "Terminating" ||
  r.phase === "RemovingNode" ||
  r.phase === "Replacing" ||
  (isTerminal(r) && r.action === "Replace")
