/**
 * The resolved controller configuration: every default filled in. Pure; `ConfigFile.ts` produces it from YAML
 * (decoded by `ConfigFileSchema.ts`, which this module reads only the type of).
 */
import { DEFAULT_POOL_LABEL, DEFAULT_REPAIR_POLICIES, type RepairAction } from "@nodemend/reason-codes"
import type { ConfigFile } from "./ConfigFileSchema.ts"

export type DrainMode = "force" | "wait"

/** Knobs that a policy or a reason override may set; unset falls back to the next level. */
export interface RepairKnobs {
  readonly tolerationSeconds?: number
  readonly action?: RepairAction
  readonly drainMode?: DrainMode
  readonly drainDeadlineSeconds?: number
  readonly captureLogs?: boolean
  /** The replacement is Ready before the node is drained (default true). */
  readonly capacityFirst?: boolean
  /** When capacity first cannot get a replacement: drain and remove anyway, or fail (keep the node). */
  readonly onNoCapacity?: NoCapacity
}

export type NoCapacity = "removeFirst" | "fail"

/** Relapse tracking (decide/relapse.ts), as resolved for one pool and reason. */
export interface RelapseSettings {
  readonly enabled: boolean
  /** A relapse is the same condition and reason within this of a repair's end; `threshold` of them within it hold. */
  readonly windowSeconds: number
  /**
   * Relapses (distinct node names: a Node re-created under its name counts once) within the window that hold new
   * repairs of the reason in the pool.
   */
  readonly threshold: number
  /** A hold lifts by itself after this long without a relapse. */
  readonly quietSeconds: number
}

/** A pool's replacement diagnostic (`pools.<p>.replacementDiagnostic`), its timeout resolved. */
export interface ReplacementDiagnostic {
  readonly dcgmLevel: 1 | 2 | 3 | 4
  readonly timeoutSeconds: number
}

/** The default bound on a replacement's DCGM diagnostic: a level 1 run takes about a minute, level 2 a few. */
export const REPLACEMENT_DIAGNOSTIC_TIMEOUT_SECONDS = 300

/** A level of relapse settings (`relapse:` or `pools.<p>.relapse:`): each key overrides the level below. */
export interface RelapseOverrides extends Partial<RelapseSettings> {
  /** Per reason (exact or catalog template). */
  readonly reasons?: Readonly<Record<string, Partial<RelapseSettings>>>
}

/** The failure-domain breaker (decide/zoneBreaker.ts). */
export interface ZoneBreakerConfig {
  readonly enabled: boolean
  /** A zone whose unhealthy share is above this while every other zone's is at or below it stands down. */
  readonly maxUnhealthyPercent: number
  /** ... and only with at least this many unhealthy nodes in it (one bad node in a small zone is not a pattern). */
  readonly minUnhealthyNodes: number
  /** A node without a zone label while a zone stands down: `standDown` (fail closed, default) or `proceed`. */
  readonly onUnknownZone: "standDown" | "proceed"
}

export interface PolicyConfig extends RepairKnobs {
  readonly conditionType: string
  readonly status: "False" | "Unknown"
  readonly tolerationSeconds: number
  /** This condition type's `escalation.windowSeconds` (decide/escalation.ts); 0 turns escalation off for it. */
  readonly escalationWindowSeconds?: number
}

/** Per-node escalation across repairs (decide/escalation.ts). */
export interface EscalationConfig {
  readonly enabled: boolean
  /** A fault that comes back on a rebooted node within this of the reboot's end is repaired by Replace. */
  readonly windowSeconds: number
}

export interface ControllerConfig {
  readonly cloudProvider: "kwok" | "aws"
  readonly dryRun: boolean
  readonly paused: boolean
  readonly namespace: string
  readonly poolLabel: string
  readonly nodeSelector: string
  readonly maxUnhealthyPercent: number
  /** Repairs in flight per pool at once: an int or a percent of the pool, rounded up (default "10%"). */
  readonly maxInFlight: string
  readonly pools: Readonly<
    Record<
      string,
      {
        readonly maxUnhealthyPercent?: number
        readonly doNotRepair?: boolean
        readonly maxInFlight?: string
        readonly relapse?: RelapseOverrides
        /** DCGM's diagnostic before a replacement counts as capacity (default timeout in resolveConfig). */
        readonly replacementDiagnostic?: ReplacementDiagnostic
      }
    >
  >
  readonly doNotRepairPools: ReadonlyArray<string>
  readonly policies: ReadonlyArray<PolicyConfig>
  readonly reasons: Readonly<Record<string, RepairKnobs>>
  readonly drain: {
    readonly deadlineSeconds: number
    readonly onDeadline: DrainMode
    readonly evictionBackoffInitialMs: number
    readonly evictionBackoffMaxMs: number
    /** Drains in flight at once; later repairs wait (tainted) in order of expiry (DrainPool.ts). */
    readonly maxConcurrent: number
  }
  readonly zonalShift: {
    readonly scope: "cluster" | "zone"
    readonly onUnknown: "standDown" | "proceed"
    readonly refreshSeconds: number
  }
  readonly breaker: { readonly requeueSeconds: number }
  /** Planned repairs for the cloud's scheduled events (decide/scheduledEvents.ts). */
  readonly scheduledEvents: {
    readonly enabled: boolean
    /** How often the cloud is asked; the answer is kept in between. */
    readonly refreshSeconds: number
    /** How long before an event's NotBefore its repair is due. */
    readonly leadSeconds: number
    readonly maintenanceWindows: Readonly<
      Record<string, { readonly schedule: string; readonly duration: string }>
    >
    /** Karpenter's interruption queue handles its own nodes' events: none is planned for them. */
    readonly karpenterInterruptionQueue: boolean
  }
  readonly relapse: RelapseSettings & { readonly reasons: Readonly<Record<string, Partial<RelapseSettings>>> }
  readonly escalation: EscalationConfig
  readonly zoneBreaker: ZoneBreakerConfig
  readonly retry: {
    readonly maxAttempts: number
    readonly initialBackoffSeconds: number
    readonly maxBackoffSeconds: number
  }
  readonly timeouts: {
    readonly taintSeconds: number
    readonly drainPastDeadlineSeconds: number
    readonly terminateSeconds: number
    readonly removeNodeSeconds: number
    readonly untaintSeconds: number
  }
  readonly reboot: { readonly settleSeconds: number; readonly timeoutSeconds: number }
  readonly replacement: {
    readonly timeoutSeconds: number
    readonly capacityFirst: boolean
    readonly onNoCapacity: NoCapacity
    /** A Ready replacement passes the health gate within this, or fails it (decide/replacementHealth.ts). */
    readonly healthTimeoutSeconds: number
    /** Replacements per repair at most, the first included, while they fail the health gate. */
    readonly maxAttempts: number
  }
  readonly logCapture: {
    readonly timeoutSeconds: number
    readonly destination?: string
    readonly categories?: ReadonlyArray<"Base" | "Device" | "Networking" | "Runtime" | "System" | "All">
  }
  readonly leaderElection: {
    readonly enabled: boolean
    readonly leaseName: string
    readonly leaseDurationSeconds: number
    readonly renewIntervalSeconds: number
  }
  readonly server: { readonly port: number }
  readonly resyncSeconds: number
  readonly kwok: {
    readonly replacementDelaySeconds: number
    readonly zonalShiftConfigMap: string
    readonly scheduledEventsConfigMap: string
    readonly replacementNamePrefix?: string
  }
  readonly aws: Readonly<Record<string, unknown>>
}

/** AcceleratedHardwareReady failures keep their evidence: logs are captured before termination by default. */
const CAPTURE_LOGS_BY_DEFAULT = new Set(["AcceleratedHardwareReady"])

export const DEFAULT_POLICIES: ReadonlyArray<PolicyConfig> = DEFAULT_REPAIR_POLICIES.map((p) => ({
  conditionType: p.conditionType,
  status: p.status,
  tolerationSeconds: p.tolerationSeconds,
  ...(CAPTURE_LOGS_BY_DEFAULT.has(p.conditionType) ? { captureLogs: true } : {})
}))

const definedKnobs = (k: RepairKnobs): RepairKnobs =>
  Object.fromEntries(Object.entries(k).filter(([, v]) => v !== undefined)) as RepairKnobs

/** Merges the file's policies into the catalog defaults (same conditionType + status replaces; `enabled: false` removes). */
const mergePolicies = (file: ConfigFile["policies"]): ReadonlyArray<PolicyConfig> => {
  const out = new Map<string, PolicyConfig>(
    DEFAULT_POLICIES.map((p) => [`${p.conditionType}/${p.status}`, p])
  )
  for (const p of file ?? []) {
    const key = `${p.conditionType}/${p.status}`
    if (p.enabled === false) {
      out.delete(key)
      continue
    }
    const base = out.get(key)
    const { enabled: _enabled, ...rest } = p
    const tolerationSeconds = p.tolerationSeconds ?? base?.tolerationSeconds ?? 30 * 60
    out.set(key, {
      ...base,
      ...definedKnobs(rest),
      conditionType: p.conditionType,
      status: p.status,
      tolerationSeconds
    })
  }
  return [...out.values()]
}

export const resolveConfig = (f: ConfigFile): ControllerConfig => ({
  cloudProvider: f.cloudProvider ?? "kwok",
  dryRun: f.dryRun ?? false,
  paused: f.paused ?? false,
  namespace: f.namespace ?? "nodemend-system",
  poolLabel: f.poolLabel ?? DEFAULT_POOL_LABEL,
  nodeSelector: f.nodeSelector ?? "",
  maxUnhealthyPercent: f.maxUnhealthyPercent ?? 20,
  maxInFlight: f.maxInFlight ?? "10%",
  pools: Object.fromEntries(
    Object.entries(f.pools ?? {}).map(([name, { replacementDiagnostic: d, ...pool }]) => [
      name,
      d === undefined
        ? pool
        : {
            ...pool,
            replacementDiagnostic: {
              dcgmLevel: d.dcgmLevel,
              timeoutSeconds: d.timeoutSeconds ?? REPLACEMENT_DIAGNOSTIC_TIMEOUT_SECONDS
            }
          }
    ])
  ),
  doNotRepairPools: f.doNotRepairPools ?? [],
  policies: mergePolicies(f.policies),
  reasons: Object.fromEntries(Object.entries(f.reasons ?? {}).map(([k, v]) => [k, definedKnobs(v)])),
  drain: {
    deadlineSeconds: f.drain?.deadlineSeconds ?? 600,
    onDeadline: f.drain?.onDeadline ?? "force",
    evictionBackoffInitialMs: f.drain?.evictionBackoffInitialMs ?? 1000,
    evictionBackoffMaxMs: f.drain?.evictionBackoffMaxMs ?? 30_000,
    maxConcurrent: f.drain?.maxConcurrent ?? 50
  },
  zonalShift: {
    scope: f.zonalShift?.scope ?? "cluster",
    onUnknown: f.zonalShift?.onUnknown ?? "standDown",
    refreshSeconds: f.zonalShift?.refreshSeconds ?? 30
  },
  breaker: { requeueSeconds: f.breaker?.requeueSeconds ?? 300 },
  scheduledEvents: {
    enabled: f.scheduledEvents?.enabled ?? true,
    refreshSeconds: f.scheduledEvents?.refreshSeconds ?? 300,
    leadSeconds: f.scheduledEvents?.leadSeconds ?? 2 * 3600,
    maintenanceWindows: f.scheduledEvents?.maintenanceWindows ?? {},
    karpenterInterruptionQueue: f.scheduledEvents?.karpenterInterruptionQueue ?? false
  },
  relapse: {
    enabled: f.relapse?.enabled ?? true,
    windowSeconds: f.relapse?.windowSeconds ?? 3600,
    threshold: f.relapse?.threshold ?? 3,
    quietSeconds: f.relapse?.quietSeconds ?? 6 * 3600,
    reasons: f.relapse?.reasons ?? {}
  },
  escalation: {
    enabled: f.escalation?.enabled ?? true,
    windowSeconds: f.escalation?.windowSeconds ?? 3600
  },
  zoneBreaker: {
    enabled: f.zoneBreaker?.enabled ?? true,
    maxUnhealthyPercent: f.zoneBreaker?.maxUnhealthyPercent ?? 20,
    minUnhealthyNodes: f.zoneBreaker?.minUnhealthyNodes ?? 3,
    onUnknownZone: f.zoneBreaker?.onUnknownZone ?? "standDown"
  },
  retry: {
    maxAttempts: f.retry?.maxAttempts ?? 8,
    initialBackoffSeconds: f.retry?.initialBackoffSeconds ?? 1,
    maxBackoffSeconds: f.retry?.maxBackoffSeconds ?? 60
  },
  timeouts: {
    taintSeconds: f.timeouts?.taintSeconds ?? 300,
    drainPastDeadlineSeconds: f.timeouts?.drainPastDeadlineSeconds ?? 3600,
    terminateSeconds: f.timeouts?.terminateSeconds ?? 900,
    removeNodeSeconds: f.timeouts?.removeNodeSeconds ?? 300,
    untaintSeconds: f.timeouts?.untaintSeconds ?? 300
  },
  reboot: { settleSeconds: f.reboot?.settleSeconds ?? 300, timeoutSeconds: f.reboot?.timeoutSeconds ?? 1200 },
  replacement: {
    timeoutSeconds: f.replacement?.timeoutSeconds ?? 1200,
    capacityFirst: f.replacement?.capacityFirst ?? true,
    onNoCapacity: f.replacement?.onNoCapacity ?? "removeFirst",
    healthTimeoutSeconds: f.replacement?.healthTimeoutSeconds ?? 600,
    maxAttempts: f.replacement?.maxAttempts ?? 2
  },
  logCapture: {
    timeoutSeconds: f.logCapture?.timeoutSeconds ?? 120,
    ...(f.logCapture?.destination !== undefined ? { destination: f.logCapture.destination } : {}),
    ...(f.logCapture?.categories !== undefined ? { categories: f.logCapture.categories } : {})
  },
  leaderElection: {
    enabled: f.leaderElection?.enabled ?? true,
    leaseName: f.leaderElection?.leaseName ?? "nodemend-controller",
    leaseDurationSeconds: f.leaderElection?.leaseDurationSeconds ?? 15,
    renewIntervalSeconds: f.leaderElection?.renewIntervalSeconds ?? 2
  },
  server: { port: f.server?.port ?? 8080 },
  resyncSeconds: f.resyncSeconds ?? 300,
  kwok: {
    replacementDelaySeconds: f.kwok?.replacementDelaySeconds ?? 5,
    zonalShiftConfigMap: f.kwok?.zonalShiftConfigMap ?? "nodemend-zonal-shifts",
    scheduledEventsConfigMap: f.kwok?.scheduledEventsConfigMap ?? "nodemend-scheduled-events",
    ...(f.kwok?.replacementNamePrefix !== undefined
      ? { replacementNamePrefix: f.kwok.replacementNamePrefix }
      : {})
  },
  aws: f.aws ?? {}
})

/** The defaults alone (no file). */
export const defaultConfig = (): ControllerConfig => resolveConfig({})
