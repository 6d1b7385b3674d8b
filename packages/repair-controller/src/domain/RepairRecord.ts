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

const OwnerSchema = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("karpenter"),
    nodeClaim: Schema.String,
    nodePool: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({ kind: Schema.Literal("autoScaling"), group: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("standalone") }),
  Schema.Struct({ kind: Schema.Literal("unknown"), why: Schema.String })
])

export const RepairRecordSchema = Schema.Struct({
  /** 3: the instance's owner and the order of replacement and removal (2: before owners, read as removeFirst). */
  v: Schema.Literal(3),
  /** Unique per repair; the idempotency token for launches. */
  id: Schema.String,
  phase: Schema.Literals(PHASES),
  action: Schema.Literals(["Replace", "Reboot"]),
  /** Set when a reboot did not clear the condition and the repair became a replacement. */
  escalatedFrom: Schema.optionalKey(Schema.Literal("Reboot")),
  /**
   * Set when the repair is a Replace from the start because the node's fault came back soon after a Reboot repair
   * of it healed it (decide/escalation.ts): that repair, its end and its reason, and when the fault came back.
   */
  escalatedAfter: Schema.optionalKey(
    Schema.Struct({ repairId: Schema.String, rebootedAt: Iso, reason: Schema.String, cameBackAt: Iso })
  ),
  /**
   * Set when a RepairRequest governed the repair (ADR 0020): who asked (proven by the admission policy when the
   * request was created) and the request (`namespace/name`).
   */
  requestedBy: Schema.optionalKey(Schema.Struct({ username: Schema.String, request: Schema.String })),
  conditionType: Schema.String,
  conditionStatus: Schema.String,
  reason: Schema.String,
  startedAt: Iso,
  /** When the governing condition's toleration ran out: the decision latency is measured from it at the taint. */
  tolerationExpiredAt: Schema.optionalKey(Iso),
  /** capacityFirst: the replacement is Ready before the node is drained; removeFirst: drained and gone first. */
  order: Schema.Literals(["capacityFirst", "removeFirst"]),
  /** What a capacityFirst repair does when no replacement can be had (default removeFirst). */
  onNoCapacity: Schema.optionalKey(Schema.Literals(["removeFirst", "fail"])),
  /** Why a capacityFirst repair fell back to removeFirst (the replacement could not be had). */
  fallback: Schema.optionalKey(Schema.String),
  drainMode: Schema.Literals(["force", "wait"]),
  drainDeadlineMs: Schema.Finite,
  drainStartedAt: Schema.optionalKey(Iso),
  drainDeadline: Schema.optionalKey(Iso),
  drainDeadlinePassed: Schema.optionalKey(Schema.Boolean),
  /** PDB-blocked eviction rounds in a row and when the last was: the eviction backoff (repair/plan.ts). */
  evictionBlocked: Schema.optionalKey(Schema.Struct({ rounds: Schema.Int, at: Iso })),
  captureLogs: Schema.Boolean,
  logsCaptured: Schema.optionalKey(Schema.Literals(["captured", "timed-out", "skipped", "failed"])),
  /** The captured log bundle's object (`s3://bucket/key`): `kubectl nodemend logs --repair` reads it. */
  logBundle: Schema.optionalKey(Schema.String),
  rebootRequestedAt: Schema.optionalKey(Iso),
  terminateRequestedAt: Schema.optionalKey(Iso),
  instanceGoneAt: Schema.optionalKey(Iso),
  replacementRequestedAt: Schema.optionalKey(Iso),
  replacement: Schema.optionalKey(
    Schema.Struct({
      instanceId: Schema.optionalKey(Schema.String),
      nodeName: Schema.optionalKey(Schema.String),
      zone: Schema.optionalKey(Schema.String),
      autoScalingGroup: Schema.optionalKey(Schema.String),
      desiredCapacity: Schema.optionalKey(Schema.Int),
      groupGrown: Schema.optionalKey(Schema.Boolean),
      /** Absent in records written before #25: the member is then told by its launch time alone. */
      membersBefore: Schema.optionalKey(Schema.Array(Schema.String)),
      nodeClaim: Schema.optionalKey(Schema.String)
    })
  ),
  /**
   * Remove first through an Auto Scaling group: the group's members just before its member was terminated without
   * decrement, journaled before the call (the group launches the replacement: a member not among them). Absent in
   * records written before #25, and for any other removal: the member is then told by its launch time alone.
   */
  /**
   * What the replacement must show before it counts as capacity (decide/replacementHealth.ts), fixed when the repair
   * started; absent in records written before #41: kubelet Ready alone then.
   */
  replacementExpects: Schema.optionalKey(
    Schema.Struct({
      agentConditions: Schema.Array(Schema.String),
      gpus: Schema.optionalKey(Schema.Int),
      /** The pool's DCGM diagnostic (pools.<p>.replacementDiagnostic), absent where the pool asks for none. */
      dcgmDiagnostic: Schema.optionalKey(
        Schema.Struct({ level: Schema.Literals([1, 2, 3, 4]), timeoutSeconds: Schema.Finite })
      )
    })
  ),
  /** When the owner first reported the current replacement Ready: its health gate's bound counts from here. */
  replacementReadyAt: Schema.optionalKey(Iso),
  /** Replacements that failed the health gate (or its bound), oldest first: never capacity; each has its own repair. */
  failedReplacements: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        nodeName: Schema.optionalKey(Schema.String),
        instanceId: Schema.optionalKey(Schema.String),
        nodeClaim: Schema.optionalKey(Schema.String),
        check: Schema.String,
        why: Schema.String,
        at: Iso
      })
    )
  ),
  removedFromGroup: Schema.optionalKey(
    Schema.Struct({ group: Schema.String, membersBefore: Schema.Array(Schema.String) })
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
      owner: OwnerSchema
    })
  })
})
export type RepairRecord = typeof RepairRecordSchema.Type

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(RepairRecordSchema))

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A v2 record (written before owners) as v3: its `replacer` becomes the owner (nodemend: standalone; autoScaling:
 * the group EC2 tagged it with; none: unknown) and its order removeFirst, the only order v2 knew.
 */
const fromV2 = (v2: Json): Json => {
  const node = isObject(v2.node) ? v2.node : {}
  const instance = isObject(node.instance) ? node.instance : {}
  const { replacer, ...rest } = instance
  const by = isObject(replacer) ? replacer.by : undefined
  const launch = isObject(instance.launch) ? instance.launch : {}
  const owner =
    by === "nodemend"
      ? { kind: "standalone" }
      : by === "autoScaling" && typeof launch.autoScalingGroup === "string"
        ? { kind: "autoScaling", group: launch.autoScalingGroup }
        : { kind: "unknown", why: isObject(replacer) ? String(replacer.why ?? "v2 record") : "v2 record" }
  return { ...v2, v: 3, order: "removeFirst", node: { ...node, instance: { ...rest, owner } } }
}

const upgraded = (text: string): string => {
  try {
    const u: unknown = JSON.parse(text)
    return isObject(u) && u.v === 2 ? JSON.stringify(fromV2(u)) : text
  } catch {
    return text
  }
}

/** Parses a journal value (v2 is upgraded); a malformed record is reported, never guessed at. */
export const parseRecord = (text: string): Result.Result<RepairRecord, string> => {
  const r = decodeJson(upgraded(text))
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success)
}

export const serializeRecord = (r: RepairRecord): string => JSON.stringify(r)

export const isTerminal = (r: RepairRecord): boolean => r.phase === "Succeeded" || r.phase === "Failed"

/** Up to here the Node must be the one the repair started on; from Terminating on it may vanish. */
export const needsLiveNode = (r: RepairRecord): boolean =>
  r.phase === "Tainting" ||
  (r.phase === "Replacing" && r.order === "capacityFirst") ||
  r.phase === "Draining" ||
  r.phase === "CapturingLogs" ||
  r.phase === "Rebooting" ||
  r.phase === "Untainting"
