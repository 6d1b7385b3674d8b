/**
 * The repair record: written to the controller's journal (a ConfigMap in its own namespace, which no node can
 * write) before every action. A restarted controller resumes from it exactly where it stopped. Nothing a node
 * can write is ever read back as a record (docs/security.md).
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
  /** 2: journal-only records bound to the Node's uid and the cloud's instance facts. */
  v: Schema.Literal(2),
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
  /** When the current phase began: its deadline counts from here (repair/budget.ts). */
  phaseSince: Schema.optionalKey(Iso),
  /** Failed attempts of the current step (reset when it succeeds): its retry budget. */
  retry: Schema.optionalKey(Schema.Struct({ count: Schema.Int, lastError: Schema.String, at: Iso })),
  /**
   * The node as it was when the repair started, and its instance as the cloud described it then: the
   * replacement is built from `instance`, and every step checks the live Node still has this uid and providerID.
   */
  node: Schema.Struct({
    name: Schema.String,
    uid: Schema.String,
    providerID: Schema.String,
    pool: Schema.optionalKey(Schema.String),
    zone: Schema.optionalKey(Schema.String),
    labels: Schema.Record(Schema.String, Schema.String),
    instance: Schema.Struct({
      instanceId: Schema.String,
      state: Schema.Literals([
        "pending",
        "running",
        "stopping",
        "stopped",
        "shutting-down",
        "terminated",
        "not-found"
      ]),
      zone: Schema.optionalKey(Schema.String),
      pool: Schema.optionalKey(Schema.String),
      launch: Schema.Record(Schema.String, Schema.String),
      replacer: Schema.Union([
        Schema.Struct({ by: Schema.Literals(["nodemend", "autoScaling"]) }),
        Schema.Struct({ by: Schema.Literal("none"), why: Schema.String })
      ])
    })
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

/** Up to here the Node must be the one the repair started on; from Terminating on it may vanish. */
export const needsLiveNode = (r: RepairRecord): boolean =>
  r.phase === "Tainting" ||
  r.phase === "Draining" ||
  r.phase === "CapturingLogs" ||
  r.phase === "Rebooting" ||
  r.phase === "Untainting"
