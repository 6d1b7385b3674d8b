/**
 * Builds the periodic checks of every enabled monitor from config. A disabled monitor registers nothing;
 * `checks.<name>.enabled: false` drops one check; `checks.<name>.intervalSeconds` overrides its interval.
 * Each check is created once here, so its delta state lives as long as the agent.
 */
import type { AgentConfig } from "../config/schema.ts"
import { CONTAINERD_SOCKET, type CriRuntimeClient, criRuntimeClient } from "../cri/runtime-client.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { clockSyncCheck } from "./clock-sync.ts"
import type { CommandRunner } from "./command-runner.ts"
import { conntrackCheck } from "./conntrack.ts"
import { containerdDeprecationsCheck } from "./containerd-deprecations.ts"
import { ebsPerformanceCheck } from "./ebs-performance.ts"
import { efaCountersCheck } from "./efa-counters.ts"
import { enaAllowancesCheck } from "./ena-allowances.ts"
import type { HostFiles } from "./host-files.ts"
import { kubeletHealthCheck, runtimeHealthCheck } from "./health-probes.ts"
import { interfacesCheck } from "./interfaces.ts"
import { ioDelaysCheck } from "./io-delays.ts"
import { ipForwardCheck } from "./ip-forward.ts"
import { ipRoutingCheck } from "./ip-routing.ts"
import { ipamdCheck } from "./ipamd.ts"
import { ipamdStateCheck } from "./ipamd-state.ts"
import { iptablesCheck } from "./iptables.ts"
import { iptablesModeCheck } from "./iptables-mode.ts"
import { environmentCheck, openFilesCheck, pidUsageCheck, zombiesCheck } from "./kernel-limits.ts"
import { macAddressPolicyCheck } from "./mac-address-policy.ts"
import { CHECKS, type CheckName } from "./names.ts"
import { npaCheck } from "./npa.ts"
import { systemdRestartsCheck } from "./systemd-restarts.ts"
import { xfsFragmentationCheck } from "./xfs-fragmentation.ts"
import { zramCheck } from "./zram.ts"

export const buildChecks = (
  config: AgentConfig,
  files: HostFiles,
  runner: CommandRunner["Service"],
  cri: CriRuntimeClient = criRuntimeClient(files.path(CONTAINERD_SOCKET))
): readonly PeriodicCheck[] => {
  const m = config.monitors
  const net = m.networking.thresholds
  const make: Record<CheckName, (intervalMs: number) => PeriodicCheck> = {
    "pid-usage": (i) => pidUsageCheck(files, m.kernel.thresholds, i),
    "open-files": (i) => openFilesCheck(files, m.kernel.thresholds, i),
    zombies: (i) => zombiesCheck(files, m.kernel.thresholds, i),
    environment: (i) => environmentCheck(files, m.kernel.thresholds, i),
    zram: (i) => zramCheck(files, m.kernel.thresholds, i),
    "clock-sync": (i) => clockSyncCheck(runner, i),
    conntrack: (i) => conntrackCheck(files, m.kernel.thresholds.conntrackPercent, i),
    interfaces: (i) => interfacesCheck(files, m.networking.excludedInterfaceNameRegexps, i),
    ipamd: (i) => ipamdCheck(files, i),
    "ip-forward": (i) => ipForwardCheck(files, i),
    "ena-allowances": (i) => enaAllowancesCheck(files, runner, i),
    "efa-counters": (i) => efaCountersCheck(files, i),
    iptables: (i) => iptablesCheck(runner, m.networking.allowedIPTablesChains, i),
    "iptables-mode": (i) => iptablesModeCheck(runner, i),
    "ip-routing": (i) => ipRoutingCheck(files, runner, i),
    "ipamd-state": (i) => ipamdStateCheck(files, cri, i),
    "mac-address-policy": (i) => macAddressPolicyCheck(files, runner, i),
    npa: (i) =>
      npaCheck(
        runner,
        { notRunningMinutes: net.npaNotRunningMinutes, restartsPerPoll: net.npaRestartsPerPoll },
        i
      ),
    "io-delays": (i) => ioDelaysCheck(files, m.storage.thresholds.ioDelaySeconds, i),
    "xfs-fragmentation": (i) =>
      xfsFragmentationCheck(files, runner, m.storage.thresholds.xfsMinAverageFreeExtent, i),
    "ebs-performance": (i) => ebsPerformanceCheck(files, runner, m.storage.thresholds.ebsExceededSeconds, i),
    "systemd-restarts": (i) =>
      systemdRestartsCheck(runner, m["container-runtime"].thresholds.systemdRestarts, i),
    "containerd-deprecations": (i) => containerdDeprecationsCheck(runner, i),
    "kubelet-health": (i) =>
      kubeletHealthCheck(files, m["container-runtime"].thresholds.healthProbeFailures, i),
    "runtime-health": (i) =>
      runtimeHealthCheck(files, cri, m["container-runtime"].thresholds.healthProbeFailures, i)
  }
  const out: PeriodicCheck[] = []
  for (const [name, spec] of Object.entries(CHECKS) as [CheckName, (typeof CHECKS)[CheckName]][]) {
    if (!m[spec.monitor].enabled) continue
    const override = config.checks[name]
    if (override?.enabled === false) continue
    out.push(make[name](Math.round((override?.intervalSeconds ?? spec.intervalSeconds) * 1000)))
  }
  return out
}
