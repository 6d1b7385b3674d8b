/**
 * The controller's config file: the loader that turns YAML into a fully resolved `ControllerConfig`, or a
 * `ConfigFileError` naming every offending field (unknown keys, wrong units, forbidden condition types).
 */
import { readFileSync } from "node:fs"
import { Data, Effect, Result, Schema } from "effect"
import { parse as parseYaml } from "yaml"
import { AwsConfig, withEnvironmentRegion } from "./AwsConfig.ts"
import { type ConfigProblem, configProblems, formatPath } from "./configIssues.ts"
import { ConfigFileSchema, STRICT } from "./ConfigFileSchema.ts"
import { type ControllerConfig, resolveConfig } from "./ControllerConfig.ts"

export { ConfigFileSchema, type ConfigFile } from "./ConfigFileSchema.ts"

export class ConfigFileError extends Data.TaggedError("ConfigFileError")<{
  readonly path: string
  /** Path of the first offending field (`drain.deadlineSeconds`, `policies[0].status`), `""` for the whole file. */
  readonly field: string
  readonly message: string
}> {}

/** Rules across fields, checked on the resolved values so that a default counts as much as a written value. */
/** A pool's diagnostic must be able to finish inside the gate's own bound, which counts from the replacement's Ready. */
const diagnosticBoundProblems = (c: ControllerConfig): ReadonlyArray<ConfigProblem> =>
  Object.entries(c.pools).flatMap(([name, pool]) =>
    pool.replacementDiagnostic !== undefined &&
    pool.replacementDiagnostic.timeoutSeconds >= c.replacement.healthTimeoutSeconds
      ? [
          {
            field: `${formatPath(["pools", name])}.replacementDiagnostic.timeoutSeconds`,
            message: `must be less than replacement.healthTimeoutSeconds (${c.replacement.healthTimeoutSeconds}), the bound of the whole health gate`
          }
        ]
      : []
  )

const crossFieldProblems = (c: ControllerConfig): ReadonlyArray<ConfigProblem> => [
  ...diagnosticBoundProblems(c),
  ...(c.drain.evictionBackoffMaxMs < c.drain.evictionBackoffInitialMs
    ? [
        {
          field: "drain.evictionBackoffMaxMs",
          message: `must be at least drain.evictionBackoffInitialMs (${c.drain.evictionBackoffInitialMs})`
        }
      ]
    : []),
  // A leader renewing no faster than its lease lasts loses the lease between renewals.
  ...(c.leaderElection.renewIntervalSeconds >= c.leaderElection.leaseDurationSeconds
    ? [
        {
          field: "leaderElection.renewIntervalSeconds",
          message: `must be less than leaderElection.leaseDurationSeconds (${c.leaderElection.leaseDurationSeconds})`
        }
      ]
    : [])
]

const invalid = (path: string, problems: ReadonlyArray<ConfigProblem>): ConfigFileError =>
  new ConfigFileError({
    path,
    field: problems[0]?.field ?? "",
    message: `invalid config ${path}: ${problems.map((p) => `${p.field || "<root>"}: ${p.message}`).join("; ")}`
  })

const decode = Schema.decodeUnknownResult(ConfigFileSchema)

/** Validates parsed YAML/JSON; the error names every offending field, the first in `field`. */
export const decodeConfig = (
  raw: unknown,
  path = "<inline>"
): Result.Result<ControllerConfig, ConfigFileError> => {
  const r = decode(raw ?? {}, STRICT)
  if (Result.isFailure(r)) return Result.fail(invalid(path, configProblems(r.failure.issue)))
  const config = resolveConfig(r.success)
  const problems = crossFieldProblems(config)
  return problems.length > 0 ? Result.fail(invalid(path, problems)) : Result.succeed(config)
}

const decodeAws = Schema.decodeUnknownResult(AwsConfig)

/**
 * What the chosen provider cannot start without (aws: a region, from the file or the environment). A file may
 * leave it out (the plain manifest's `aws: {}` takes the region EKS puts in the pod's environment); a start
 * without one must say so before it reads a kubeconfig or waits in standby for the lease.
 */
const providerProblems = (c: ControllerConfig): ReadonlyArray<ConfigProblem> => {
  if (c.cloudProvider !== "aws") return []
  const r = decodeAws(withEnvironmentRegion(c.aws), STRICT)
  return Result.isFailure(r) ? configProblems(r.failure.issue, ["aws"]) : []
}

/**
 * Reads and validates the YAML file at `path` as every reader of the file needs it: the schema and the rules across
 * fields, not the cloud provider's own settings (a what-if replay reads the file of a controller that runs elsewhere).
 */
export const readConfigFile = (path: string): Effect.Effect<ControllerConfig, ConfigFileError> =>
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

/** Reads and validates the YAML file at `path`, as a start needs it: complete for its cloud provider. */
export const loadConfigFile = (path: string): Effect.Effect<ControllerConfig, ConfigFileError> =>
  Effect.gen(function* () {
    const config = yield* readConfigFile(path)
    const missing = providerProblems(config)
    if (missing.length > 0) return yield* Effect.fail(invalid(path, missing))
    return config
  })
