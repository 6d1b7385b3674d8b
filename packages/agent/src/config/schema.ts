/**
 * The agent's YAML config file, validated with Schema. Unknown keys are rejected (the decoder runs with
 * `onExcessProperty: "error"`), and every error names the offending field.
 */
import { NvidiaMonitorSettings } from "./nvidia-settings.ts"
import { Effect, Schema } from "effect"
import { RuleOverride, UserRule } from "../rules/overrides.ts"
import { DEFAULT_DESTINATION_ALLOWLIST, parseAllowedDestination } from "./destination-allowlist.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

const Percent = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 100 }))
const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefault(Effect.succeed(value)))

/**
 * Per reason code: switch it off, change Condition <-> Event, or (log rules only) require N occurrences
 * within a window before it counts. `quietSeconds`: how long a catalog Event promoted to a Condition stays
 * False without a new occurrence (src/recovery/promoted-recovery.ts).
 */
export const ReasonOverride = Schema.Struct({
  disabled: Schema.optionalKey(Schema.Boolean),
  severity: Schema.optionalKey(Schema.Literals(["Condition", "Event"])),
  minOccurrences: Schema.optionalKey(PositiveInt),
  windowSeconds: Schema.optionalKey(PositiveInt),
  quietSeconds: Schema.optionalKey(PositiveInt)
})
export type ReasonOverride = typeof ReasonOverride.Type

/**
 * The ceiling of one monitor's Events: `burst` API calls at once, then one per `refillSeconds`. Within it each
 * reason's repeats have a bucket of half the burst, and a reason's first occurrence in 10 minutes is always
 * written (src/k8s/event-budget.ts, docs/agent-runtime.md "Event budgets").
 */
export const EventBudget = Schema.Struct({
  burst: withDefault(PositiveInt, 25),
  refillSeconds: withDefault(Schema.Finite.check(Schema.isGreaterThan(0)), 300)
})
export type EventBudget = typeof EventBudget.Type

const monitorFields = {
  enabled: withDefault(Schema.Boolean, true),
  reasons: withDefault(Schema.Record(Schema.String, ReasonOverride), {}),
  events: Schema.optionalKey(EventBudget)
}

export const KernelThresholds = Schema.Struct({
  openFilesPercent: withDefault(Percent, 70),
  pidPercent: withDefault(Percent, 70),
  zombieCount: withDefault(PositiveInt, 20),
  environmentVariables: withDefault(PositiveInt, 1000),
  zramPercent: withDefault(Percent, 10),
  conntrackPercent: withDefault(Percent, 90)
})
export const StorageThresholds = Schema.Struct({
  ioDelaySeconds: withDefault(Schema.Finite.check(Schema.isGreaterThan(0)), 10),
  xfsMinAverageFreeExtent: withDefault(Schema.Finite.check(Schema.isGreaterThan(0)), 16),
  ebsExceededSeconds: withDefault(Schema.Finite.check(Schema.isGreaterThan(0)), 50)
})
/** NPA: not active for this long -> NPANotRunning; this many restarts between two polls -> NPARepeatedlyRestart. */
export const NetworkingThresholds = Schema.Struct({
  npaNotRunningMinutes: withDefault(Schema.Finite.check(Schema.isGreaterThan(0)), 15),
  npaRestartsPerPoll: withDefault(PositiveInt, 5)
})
export const RuntimeThresholds = Schema.Struct({
  systemdRestarts: withDefault(PositiveInt, 3),
  /** Consecutive failed kubelet /healthz or CRI probes before KubeletUnhealthy / ContainerRuntimeUnhealthy. */
  healthProbeFailures: withDefault(PositiveInt, 3)
})

/** NMA's defaults (reference 1.10): tunnels and InfiniBand devices are never "up" in the usual sense. */
export const DEFAULT_EXCLUDED_INTERFACES = [
  "^gre[0-9]+$",
  "^gretap[0-9]+$",
  "^erspan[0-9]+$",
  "^ip6gre[0-9]+$",
  "^ip6gretap[0-9]+$",
  "^tunl[0-9]+$",
  "^sit[0-9]+$",
  "^ip6tnl[0-9]+$",
  "^ib[0-9]+$",
  "^ibp[0-9]+s[0-9]+(f[0-9]+)?$"
] as const

const RegexpString = Schema.String.check(
  Schema.makeFilter((s: string) => {
    try {
      new RegExp(s)
      return true
    } catch (e) {
      return `invalid regular expression: ${(e as Error).message}`
    }
  })
)
const IptablesChain = Schema.String.check(
  Schema.isPattern(/^[^\s/]+\/[^\s/]+$/, { expected: 'a "table/chain" string such as "filter/MY-CHAIN"' })
)

export const KernelMonitorConfig = Schema.Struct({
  ...monitorFields,
  thresholds: withDefault(KernelThresholds, {})
})
export const NetworkingMonitorConfig = Schema.Struct({
  ...monitorFields,
  /** An explicit `[]` switches the defaults off. */
  excludedInterfaceNameRegexps: withDefault(Schema.Array(RegexpString), DEFAULT_EXCLUDED_INTERFACES),
  allowedIPTablesChains: withDefault(Schema.Array(IptablesChain), []),
  thresholds: withDefault(NetworkingThresholds, {})
})
export const StorageMonitorConfig = Schema.Struct({
  ...monitorFields,
  thresholds: withDefault(StorageThresholds, {})
})
export const RuntimeMonitorConfig = Schema.Struct({
  ...monitorFields,
  thresholds: withDefault(RuntimeThresholds, {})
})
export const PlainMonitorConfig = Schema.Struct(monitorFields)
/** `monitors.nvidia`: the common monitor fields plus the NVIDIA monitor's settings (library paths, DCGM target, cadences). */
export const NvidiaMonitorConfig = Schema.Struct({ ...monitorFields, ...NvidiaMonitorSettings.fields })

export const MonitorsConfig = Schema.Struct({
  kernel: withDefault(KernelMonitorConfig, {}),
  "container-runtime": withDefault(RuntimeMonitorConfig, {}),
  networking: withDefault(NetworkingMonitorConfig, {}),
  storage: withDefault(StorageMonitorConfig, {}),
  nvidia: withDefault(NvidiaMonitorConfig, {}),
  neuron: withDefault(PlainMonitorConfig, {})
})

export const CheckConfig = Schema.Struct({
  intervalSeconds: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0))),
  enabled: withDefault(Schema.Boolean, true)
})

/** One place a log bundle may be uploaded to: `s3://bucket[/prefix]` or an https URL prefix. */
const AllowedDestinationEntry = Schema.String.check(
  Schema.makeFilter((s: string) => {
    const parsed = parseAllowedDestination(s)
    return parsed.ok ? true : parsed.error
  })
)

/** On-demand log bundles for NodeDiagnostic objects naming this node (docs/diagnostics.md). */
export const DiagnosticsConfig = Schema.Struct({
  enabled: withDefault(Schema.Boolean, true),
  /**
   * Where a NodeDiagnostic may have the bundle uploaded, besides `node` (always allowed): S3 buckets
   * (`s3://bucket[/prefix]`) and URL prefixes (`https://host[:port][/path]`). Default: none.
   */
  destinationAllowlist: withDefault(Schema.Array(AllowedDestinationEntry), DEFAULT_DESTINATION_ALLOWLIST)
})

export const AgentConfig = Schema.Struct({
  /** A condition is re-written at least this often even when nothing changed. */
  heartbeatSeconds: withDefault(Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: 3600 })), 300),
  /** Default Event budget of every monitor (a monitor may override it). */
  events: withDefault(EventBudget, {}),
  monitors: withDefault(MonitorsConfig, {}),
  diagnostics: withDefault(DiagnosticsConfig, {}),
  /** Per periodic check (names in check-names.ts): interval override or off switch. */
  checks: withDefault(Schema.Record(Schema.String, CheckConfig), {}),
  /** The operator's own log rules, in the built-in rules' shape (validated by the rules engine's schema). */
  logRules: withDefault(Schema.Array(UserRule), []),
  /**
   * Changes to log rules (built-in or `logRules`) by rule id: `disabled: true`, or new values for `pattern`,
   * `literals`, `sources`, `reason`, `message`, `subject`, `severity`, `minOccurrences`, `windowSeconds`.
   */
  logRuleOverrides: withDefault(Schema.Record(Schema.String, RuleOverride), {}),
  /** Minimum quiet gap between two periodic checks, so that checks never bunch up. */
  checkSpacingMillis: withDefault(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 10_000 })), 10)
})
export type AgentConfig = typeof AgentConfig.Type
export type MonitorConfig = typeof PlainMonitorConfig.Type
