/**
 * The controller's YAML config file as a Schema: every field optional, each number in its named unit
 * (units.ts). It is decoded with unknown keys as errors (ConfigFile.ts), at every level, `aws:` included.
 */
import { CATALOG, NEVER_REPAIR_CONDITION_TYPES } from "@nodemend/reason-codes"
import { Result, Schema } from "effect"
import { scheduleProblem } from "./cronSchedule.ts"
import { AwsConfigSection } from "./AwsConfig.ts"
import { Count, Percent, Port, PositiveMillis, PositiveSeconds, Seconds } from "./units.ts"

/** How the file is decoded, wherever a part of it is: a typo is an error, never an ignored key. */
export const STRICT = { onExcessProperty: "error", errors: "all" } as const

const Action = Schema.Literals(["Replace", "Reboot", "None"])
const DrainMode = Schema.Literals(["force", "wait"])
const Name = Schema.String.check(Schema.isNonEmpty())

const NEVER_REPAIR: ReadonlySet<string> = new Set(NEVER_REPAIR_CONDITION_TYPES)

/** Contract 3: kubelet's pressure conditions are workload-driven, so no policy may name one. */
const RepairableConditionType = Name.check(
  Schema.makeFilter((t) =>
    NEVER_REPAIR.has(t)
      ? `${t} is a kubelet-owned condition and is never repaired (forbidden: ${NEVER_REPAIR_CONDITION_TYPES.join(", ")})`
      : undefined
  )
)

/** Catalog templates (`NvidiaXID{code}Error`): a `reasons:` key with a placeholder must be one of them. */
export const REASON_TEMPLATES: ReadonlyArray<string> = CATALOG.map((e) => e.code).filter((c) =>
  c.includes("{")
)

/** A `reasons:` key with a placeholder that is no catalog template would never match a reason. */
const knownTemplates = Schema.makeFilter((reasons: Readonly<Record<string, unknown>>) => {
  const bad = Object.keys(reasons).find((k) => k.includes("{") && !REASON_TEMPLATES.includes(k))
  return bad === undefined
    ? undefined
    : { path: [bad], issue: `not a catalog reason template (templates: ${REASON_TEMPLATES.join(", ")})` }
})

const NoCapacity = Schema.Literals(["removeFirst", "fail"])

/** Per-policy or per-reason repair knobs; anything left out falls back to the next level. */
const RepairKnobs = {
  tolerationSeconds: Schema.optionalKey(Seconds),
  action: Schema.optionalKey(Action),
  /** What to do when the drain deadline passes: `force` deletes the remaining pods, `wait` keeps waiting. */
  drainMode: Schema.optionalKey(DrainMode),
  drainDeadlineSeconds: Schema.optionalKey(Seconds),
  captureLogs: Schema.optionalKey(Schema.Boolean),
  /** The replacement is up and Ready before the node is drained, so pods move once (default true). */
  capacityFirst: Schema.optionalKey(Schema.Boolean),
  /** No replacement to be had (capacity, limits, shifted zone): `removeFirst` drains anyway, `fail` keeps the node. */
  onNoCapacity: Schema.optionalKey(NoCapacity)
}

export const PolicyFile = Schema.Struct({
  conditionType: RepairableConditionType,
  status: Schema.Literals(["False", "Unknown"]),
  /** false removes a default policy. */
  enabled: Schema.optionalKey(Schema.Boolean),
  ...RepairKnobs,
  /** This condition type's `escalation.windowSeconds`; 0 turns escalation off for it. */
  escalationWindowSeconds: Schema.optionalKey(Seconds)
})

/** A pool's maintenance window, checked as Karpenter checks a budget's schedule and duration. */
const MaintenanceWindowFile = Schema.Struct({ schedule: Name, duration: Name }).check(
  Schema.makeFilter((w) => {
    const why = scheduleProblem(w.schedule, w.duration)
    return why === undefined || why
  })
)

/** Two entries for one conditionType + status: the later would silently replace the earlier. */
const noDuplicatePolicies = Schema.makeFilter((ps: ReadonlyArray<typeof PolicyFile.Type>) => {
  const seen = new Map<string, number>()
  for (const [i, p] of ps.entries()) {
    const key = `${p.conditionType}/${p.status}`
    const first = seen.get(key)
    if (first !== undefined) return { path: [i], issue: `duplicate of policies[${first}] (${key})` }
    seen.set(key, i)
  }
  return undefined
})

export const ReasonOverrideFile = Schema.Struct(RepairKnobs)

/** Int or percent, as Karpenter's disruption budget `nodes`: `"2"`, `"10%"`. */
const IntOrPercent = Schema.String.check(
  Schema.makeFilter((v: string) =>
    /^((100|[0-9]{1,2})%|[0-9]+)$/.test(v) ? undefined : 'an int ("2") or a percent ("10%")'
  )
)

/** Relapse settings at one level; each key left out falls back to the level below. */
const RelapseKnobs = {
  enabled: Schema.optionalKey(Schema.Boolean),
  /** A relapse is the same condition and reason within this of a repair's end (and counts for this long). */
  windowSeconds: Schema.optionalKey(PositiveSeconds),
  /**
   * Relapses (distinct node names: a Node re-created under its name counts once) within the window that hold new
   * repairs of the reason in the pool.
   */
  threshold: Schema.optionalKey(Count),
  /** A hold lifts by itself after this long without a relapse. */
  quietSeconds: Schema.optionalKey(PositiveSeconds)
}
export const RelapseReasonFile = Schema.Struct(RelapseKnobs)
export const RelapseFile = Schema.Struct({
  ...RelapseKnobs,
  /** Keyed by exact reason or catalog template, as `reasons:`. */
  reasons: Schema.optionalKey(Schema.Record(Schema.String, RelapseReasonFile).check(knownTemplates))
})

/**
 * A pool's replacements pass DCGM's active diagnostic at this level before they count as capacity (ADR 0019),
 * asked of the replacement's agent through a NodeDiagnostic; no result within `timeoutSeconds` fails the gate.
 */
export const ReplacementDiagnosticFile = Schema.Struct({
  dcgmLevel: Schema.Literals([1, 2, 3, 4]),
  timeoutSeconds: Schema.optionalKey(PositiveSeconds)
})

export const PoolFile = Schema.Struct({
  maxUnhealthyPercent: Schema.optionalKey(Percent),
  maxInFlight: Schema.optionalKey(IntOrPercent),
  doNotRepair: Schema.optionalKey(Schema.Boolean),
  relapse: Schema.optionalKey(RelapseFile),
  replacementDiagnostic: Schema.optionalKey(ReplacementDiagnosticFile)
})

const decodeAwsSection = Schema.decodeUnknownResult(AwsConfigSection)

/**
 * The `aws:` section is checked by the AWS provider's own schema (AwsConfig.ts) but kept as written: the
 * provider decodes it again, with its defaults and required keys, when `cloudProvider: aws` starts it.
 */
const AwsSectionFile = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((section) => {
    const r = decodeAwsSection(section, STRICT)
    return Result.isFailure(r) ? r.failure.issue : undefined
  })
)

export const ConfigFileSchema = Schema.Struct({
  cloudProvider: Schema.optionalKey(Schema.Literals(["kwok", "aws"])),
  dryRun: Schema.optionalKey(Schema.Boolean),
  paused: Schema.optionalKey(Schema.Boolean),
  /** Namespace for Events about Nodes, the leader Lease and the repair journal. */
  namespace: Schema.optionalKey(Name),
  poolLabel: Schema.optionalKey(Name),
  /** Label selector of the Nodes this controller manages (empty: all Nodes). */
  nodeSelector: Schema.optionalKey(Schema.String),
  maxUnhealthyPercent: Schema.optionalKey(Percent),
  /** Repairs in flight per pool at once (default "10%"), unless a Karpenter NodePool's budget says less. */
  maxInFlight: Schema.optionalKey(IntOrPercent),
  pools: Schema.optionalKey(Schema.Record(Schema.String, PoolFile)),
  doNotRepairPools: Schema.optionalKey(Schema.Array(Name)),
  /** Replaces the catalog's policy list entry by entry (matched on conditionType + status). */
  policies: Schema.optionalKey(Schema.Array(PolicyFile).check(noDuplicatePolicies)),
  /** Keyed by exact reason (`NvidiaXID79Error`) or catalog template (`NvidiaXID{code}Error`). */
  reasons: Schema.optionalKey(Schema.Record(Schema.String, ReasonOverrideFile).check(knownTemplates)),
  drain: Schema.optionalKey(
    Schema.Struct({
      deadlineSeconds: Schema.optionalKey(Seconds),
      onDeadline: Schema.optionalKey(DrainMode),
      evictionBackoffInitialMs: Schema.optionalKey(PositiveMillis),
      evictionBackoffMaxMs: Schema.optionalKey(PositiveMillis),
      /** Drains in flight at once (default 50); more repairs wait their turn, tainted, in order of expiry. */
      maxConcurrent: Schema.optionalKey(Count)
    })
  ),
  zonalShift: Schema.optionalKey(
    Schema.Struct({
      scope: Schema.optionalKey(Schema.Literals(["cluster", "zone"])),
      /** What to do when the provider cannot say whether a shift is active. Default `standDown`. */
      onUnknown: Schema.optionalKey(Schema.Literals(["standDown", "proceed"])),
      refreshSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  breaker: Schema.optionalKey(Schema.Struct({ requeueSeconds: Schema.optionalKey(PositiveSeconds) })),
  /** Planned repairs for the cloud's scheduled events (decide/scheduledEvents.ts, ADR 0018). */
  scheduledEvents: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.optionalKey(Schema.Boolean),
      refreshSeconds: Schema.optionalKey(PositiveSeconds),
      leadSeconds: Schema.optionalKey(Seconds),
      /** Per pool: a cron schedule in UTC and a duration, as a NodePool disruption budget's. */
      maintenanceWindows: Schema.optionalKey(Schema.Record(Schema.String, MaintenanceWindowFile)),
      /**
       * Karpenter's interruption queue (its `settings.interruptionQueue`, fed by EventBridge) is set up: Karpenter
       * acts on its own nodes' scheduled events, so nodemend plans none for them and says so.
       */
      karpenterInterruptionQueue: Schema.optionalKey(Schema.Boolean)
    })
  ),
  /** Relapse holds (decide/relapse.ts): per pool in `pools.<p>.relapse`, per reason in `reasons`. */
  relapse: Schema.optionalKey(RelapseFile),
  /**
   * Per-node escalation across repairs (decide/escalation.ts): a node whose fault comes back within `windowSeconds`
   * of a Reboot repair's end is replaced the next time; per condition type in `policies[].escalationWindowSeconds`.
   */
  escalation: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.optionalKey(Schema.Boolean),
      windowSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  /** The failure-domain breaker (decide/zoneBreaker.ts). */
  zoneBreaker: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.optionalKey(Schema.Boolean),
      maxUnhealthyPercent: Schema.optionalKey(Percent),
      minUnhealthyNodes: Schema.optionalKey(Count),
      onUnknownZone: Schema.optionalKey(Schema.Literals(["standDown", "proceed"]))
    })
  ),
  /** A step whose call fails with a retryable error is tried again with backoff, at most `maxAttempts` times. */
  retry: Schema.optionalKey(
    Schema.Struct({
      maxAttempts: Schema.optionalKey(Count),
      initialBackoffSeconds: Schema.optionalKey(PositiveSeconds),
      maxBackoffSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  /** How long each step of a repair may take before the repair ends as Failed (reboot, replacement: their own). */
  timeouts: Schema.optionalKey(
    Schema.Struct({
      taintSeconds: Schema.optionalKey(PositiveSeconds),
      /** Past the drain deadline (force: deleting pods that hang; wait: PDBs that never allow). */
      drainPastDeadlineSeconds: Schema.optionalKey(PositiveSeconds),
      terminateSeconds: Schema.optionalKey(PositiveSeconds),
      removeNodeSeconds: Schema.optionalKey(PositiveSeconds),
      untaintSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  reboot: Schema.optionalKey(
    Schema.Struct({
      settleSeconds: Schema.optionalKey(Seconds),
      timeoutSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  replacement: Schema.optionalKey(
    Schema.Struct({
      timeoutSeconds: Schema.optionalKey(PositiveSeconds),
      capacityFirst: Schema.optionalKey(Schema.Boolean),
      onNoCapacity: Schema.optionalKey(NoCapacity),
      /** How long a Ready replacement may take to pass the health gate (agent conditions, GPUs) before it fails it. */
      healthTimeoutSeconds: Schema.optionalKey(PositiveSeconds),
      /** Replacements one repair launches at most (the first included) while they fail the health gate. */
      maxAttempts: Schema.optionalKey(Count)
    })
  ),
  logCapture: Schema.optionalKey(
    Schema.Struct({
      timeoutSeconds: Schema.optionalKey(PositiveSeconds),
      /**
       * Where the pre-termination bundle goes: an https URL template (`{node}`, `{repairId}` filled in) the
       * agents' allowlist accepts. Unset: the capture step is skipped (a `node` bundle dies with the instance).
       */
      destination: Schema.optionalKey(Name),
      categories: Schema.optionalKey(
        Schema.Array(Schema.Literals(["Base", "Device", "Networking", "Runtime", "System", "All"]))
      )
    })
  ),
  leaderElection: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.optionalKey(Schema.Boolean),
      leaseName: Schema.optionalKey(Name),
      leaseDurationSeconds: Schema.optionalKey(PositiveSeconds),
      renewIntervalSeconds: Schema.optionalKey(PositiveSeconds)
    })
  ),
  server: Schema.optionalKey(Schema.Struct({ port: Schema.optionalKey(Port) })),
  resyncSeconds: Schema.optionalKey(PositiveSeconds),
  kwok: Schema.optionalKey(
    Schema.Struct({
      replacementDelaySeconds: Schema.optionalKey(Seconds),
      zonalShiftConfigMap: Schema.optionalKey(Name),
      /** The ConfigMap (controller's namespace) the kwok provider reads scheduled events from. */
      scheduledEventsConfigMap: Schema.optionalKey(Name),
      /** Prefix of replacement Node names; default: the failed node's name. */
      replacementNamePrefix: Schema.optionalKey(Name)
    })
  ),
  /** The AWS provider's section (docs/aws.md). */
  aws: Schema.optionalKey(AwsSectionFile)
})
export type ConfigFile = typeof ConfigFileSchema.Type
