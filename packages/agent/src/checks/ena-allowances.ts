/**
 * ENA allowance counters (reference 2.5): `ethtool -S <if>` on every interface bound to the `ena`
 * driver; an increase of `bw_in_allowance_exceeded`, ... beyond its token bucket (one token per 10 min,
 * NMA's bursts) is a Warning Event. The tracker lives as long as the agent (NMA pitfall 4).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { makeCounterTracker } from "./counter-tracker.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

const PER_SECOND = 1 / 600
export const ENA_ALLOWANCES = {
  bw_in_allowance_exceeded: { reason: "BandwidthInExceeded", burst: 180 },
  bw_out_allowance_exceeded: { reason: "BandwidthOutExceeded", burst: 100 },
  conntrack_allowance_exceeded: { reason: "ConntrackExceeded", burst: 100 },
  linklocal_allowance_exceeded: { reason: "LinkLocalExceeded", burst: 100 },
  pps_allowance_exceeded: { reason: "PPSExceeded", burst: 320 }
} as const

/** `ethtool -S` output: a header line, then `     name: value` lines. */
export const parseEthtoolStats = (stdout: string): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  for (const line of stdout.split("\n")) {
    const m = /^\s*([^:\s][^:]*?):\s*(-?\d+)\s*$/.exec(line)
    if (m !== null) out.set(m[1]!, Number(m[2]))
  }
  return out
}

/** Exit code 94 is ethtool's "no statistics for this device" (NMA tolerates it). */
const NO_STATS_EXIT = 94

export const enaAllowancesCheck = (
  files: HostFiles,
  runner: CommandRunner["Service"],
  intervalMs: number
): PeriodicCheck => {
  const tracker = makeCounterTracker()
  return {
    name: "ena-allowances",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        for (const iface of yield* files.list("sys/class/net")) {
          const driver = yield* files.linkTarget(`sys/class/net/${iface}/device/driver`)
          if (driver === undefined || !driver.endsWith("/ena")) continue
          const result = yield* runner
            .run("ethtool", ["-S", iface], { timeoutMs: 5000 })
            .pipe(
              Effect.catch((e) =>
                Effect.logWarning("ethtool failed", { iface, error: e.message }).pipe(Effect.as(undefined))
              )
            )
          if (result === undefined || result.exitCode === NO_STATS_EXIT) continue
          if (result.exitCode !== 0) {
            yield* Effect.logWarning("ethtool failed", { iface, error: exitDetail(result) })
            continue
          }
          const stats = parseEthtoolStats(result.stdout)
          for (const [stat, { reason, burst }] of Object.entries(ENA_ALLOWANCES)) {
            const value = stats.get(stat)
            if (value === undefined) continue
            const jump = tracker.observe(`${iface}/${stat}`, value, tick.nowMs, {
              burst,
              perSecond: PER_SECOND
            })
            if (jump !== undefined)
              out.push(
                detection(
                  reason,
                  `${stat} increased on interface "${iface}" from ${jump.from} to ${jump.to}`,
                  tick.nowMs,
                  iface
                )
              )
          }
        }
        return out
      })
  }
}
