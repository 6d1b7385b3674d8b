/**
 * The controller's YAML config file: its Schema (every field optional, unknown keys rejected) and the
 * loader that turns a file into a fully resolved `ControllerConfig` or a `ConfigFileError` naming the field.
 */
import { readFileSync } from "node:fs"
import { Data, Effect, Result, Schema, SchemaIssue } from "effect"
import { parse as parseYaml } from "yaml"
import { type ControllerConfig, resolveConfig } from "./ControllerConfig.ts"

const Seconds = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const Percent = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 100 }))
const Action = Schema.Literals(["Replace", "Reboot", "None"])
const DrainMode = Schema.Literals(["force", "wait"])
const Name = Schema.String.check(Schema.isNonEmpty())

/** Per-policy or per-reason repair knobs; anything left out falls back to the next level. */
const RepairKnobs = {
  tolerationSeconds: Schema.optionalKey(Seconds),
  action: Schema.optionalKey(Action),
  /** What to do when the drain deadline passes: `force` deletes the remaining pods, `wait` keeps waiting. */
  drainMode: Schema.optionalKey(DrainMode),
  drainDeadlineSeconds: Schema.optionalKey(Seconds),
  captureLogs: Schema.optionalKey(Schema.Boolean)
}

export const PolicyFile = Schema.Struct({
  conditionType: Name,
  status: Schema.Literals(["False", "Unknown"]),
  /** false removes a default policy. */
  enabled: Schema.optionalKey(Schema.Boolean),
  ...RepairKnobs
})

export const ReasonOverrideFile = Schema.Struct(RepairKnobs)

export const PoolFile = Schema.Struct({
  maxUnhealthyPercent: Schema.optionalKey(Percent),
  doNotRepair: Schema.optionalKey(Schema.Boolean)
})

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
  pools: Schema.optionalKey(Schema.Record(Schema.String, PoolFile)),
  doNotRepairPools: Schema.optionalKey(Schema.Array(Name)),
  /** Replaces the catalog's policy list entry by entry (matched on conditionType + status). */
  policies: Schema.optionalKey(Schema.Array(PolicyFile)),
  /** Keyed by exact reason (`NvidiaXID79Error`) or catalog template (`NvidiaXID{code}Error`). */
  reasons: Schema.optionalKey(Schema.Record(Schema.String, ReasonOverrideFile)),
  drain: Schema.optionalKey(
    Schema.Struct({
      deadlineSeconds: Schema.optionalKey(Seconds),
      onDeadline: Schema.optionalKey(DrainMode),
      evictionBackoffInitialMs: Schema.optionalKey(Seconds),
      evictionBackoffMaxMs: Schema.optionalKey(Seconds),
      /** Drains in flight at once (default 50); more repairs wait their turn, tainted, in order of expiry. */
      maxConcurrent: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
    })
  ),
  zonalShift: Schema.optionalKey(
    Schema.Struct({
      scope: Schema.optionalKey(Schema.Literals(["cluster", "zone"])),
      /** What to do when the provider cannot say whether a shift is active. Default `standDown`. */
      onUnknown: Schema.optionalKey(Schema.Literals(["standDown", "proceed"])),
      refreshSeconds: Schema.optionalKey(Seconds)
    })
  ),
  breaker: Schema.optionalKey(Schema.Struct({ requeueSeconds: Schema.optionalKey(Seconds) })),
  reboot: Schema.optionalKey(
    Schema.Struct({ settleSeconds: Schema.optionalKey(Seconds), timeoutSeconds: Schema.optionalKey(Seconds) })
  ),
  replacement: Schema.optionalKey(Schema.Struct({ timeoutSeconds: Schema.optionalKey(Seconds) })),
  logCapture: Schema.optionalKey(
    Schema.Struct({
      timeoutSeconds: Schema.optionalKey(Seconds),
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
      leaseDurationSeconds: Schema.optionalKey(Seconds),
      renewIntervalSeconds: Schema.optionalKey(Seconds)
    })
  ),
  server: Schema.optionalKey(Schema.Struct({ port: Schema.optionalKey(Schema.Int) })),
  resyncSeconds: Schema.optionalKey(Seconds),
  kwok: Schema.optionalKey(
    Schema.Struct({
      replacementDelaySeconds: Schema.optionalKey(Seconds),
      zonalShiftConfigMap: Schema.optionalKey(Name),
      /** Prefix of replacement Node names; default: the failed node's name. */
      replacementNamePrefix: Schema.optionalKey(Name)
    })
  ),
  /** Extended by the AWS provider (issue #5); kept open so its fields pass through. */
  aws: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type ConfigFile = typeof ConfigFileSchema.Type

export class ConfigFileError extends Data.TaggedError("ConfigFileError")<{
  readonly path: string
  /** Dotted path of the offending field, `""` for the whole file. */
  readonly field: string
  readonly message: string
}> {}

const decode = Schema.decodeUnknownResult(ConfigFileSchema)

/** Validates parsed YAML/JSON; the error names the first offending field. */
export const decodeConfig = (
  raw: unknown,
  path = "<inline>"
): Result.Result<ControllerConfig, ConfigFileError> => {
  const r = decode(raw ?? {}, { onExcessProperty: "error", errors: "all" })
  if (Result.isFailure(r)) {
    const issues = SchemaIssue.makeFormatterStandardSchemaV1()(r.failure.issue).issues
    const first = issues[0]
    const field = first?.path?.map((p) => String(typeof p === "object" ? p.key : p)).join(".") ?? ""
    const all = issues.map(
      (i) =>
        `${i.path?.map((p) => String(typeof p === "object" ? p.key : p)).join(".") || "<root>"}: ${i.message}`
    )
    return Result.fail(
      new ConfigFileError({ path, field, message: `invalid config ${path}: ${all.join("; ")}` })
    )
  }
  return Result.succeed(resolveConfig(r.success))
}

/** Reads and validates the YAML file at `path`. */
export const loadConfigFile = (path: string): Effect.Effect<ControllerConfig, ConfigFileError> =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) =>
        new ConfigFileError({ path, field: "", message: `cannot read config ${path}: ${String(e)}` })
    })
    const raw = yield* Effect.try({
      try: () => parseYaml(text) as unknown,
      catch: (e) =>
        new ConfigFileError({ path, field: "", message: `config ${path} is not valid YAML: ${String(e)}` })
    })
    const decoded = decodeConfig(raw, path)
    if (Result.isFailure(decoded)) return yield* Effect.fail(decoded.failure)
    return decoded.success
  })
