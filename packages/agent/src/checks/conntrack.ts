/**
 * ConntrackTableNearlyFull: node-problem-detector's ConntrackFull (config/network-problem-monitor.json,
 * config/plugin/network_problem.sh at v1.36.0: `conntrack_count > conntrack_max * 9 /10`, every 30 s,
 * a temporary problem). The agent already reports the drops themselves from the kernel log
 * (ConntrackExceededKernel, `nf_conntrack: table full, dropping packet`); this says so before they start.
 *
 * Reads `<host-root>/proc/sys/net/netfilter/nf_conntrack_{count,max}` (the agent runs in the host's network
 * namespace, whose table these files show). Not watching (nothing at all): the nf_conntrack module is not
 * loaded (no files), or a file is not a non-negative integer, or the maximum is 0.
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export const CONNTRACK_COUNT = "proc/sys/net/netfilter/nf_conntrack_count"
export const CONNTRACK_MAX = "proc/sys/net/netfilter/nf_conntrack_max"

/** A sysctl's value: one non-negative decimal integer and a newline; anything else is undefined. */
export const parseSysctlCount = (text: string | undefined): number | undefined => {
  const t = text?.trim()
  if (t === undefined || !/^[0-9]{1,15}$/.test(t)) return undefined
  return Number(t)
}

/** Usage in percent (one decimal), or undefined when the numbers say nothing. */
export const conntrackUsage = (
  countText: string | undefined,
  maxText: string | undefined
): { readonly count: number; readonly max: number; readonly percent: number } | undefined => {
  const count = parseSysctlCount(countText)
  const max = parseSysctlCount(maxText)
  if (count === undefined || max === undefined || max === 0) return undefined
  return { count, max, percent: (100 * count) / max }
}

export const conntrackFindings = (
  countText: string | undefined,
  maxText: string | undefined,
  thresholdPercent: number,
  nowMs: number
): Finding[] => {
  const u = conntrackUsage(countText, maxText)
  if (u === undefined || u.percent < thresholdPercent) return []
  return [
    detection(
      "ConntrackTableNearlyFull",
      `Connection tracking table is ${u.percent.toFixed(1)}% full (${u.count} of ${u.max} entries)`,
      nowMs
    )
  ]
}

export const conntrackCheck = (
  files: HostFiles,
  thresholdPercent: number,
  intervalMs: number
): PeriodicCheck => ({
  name: "conntrack",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const max = yield* files.text(CONNTRACK_MAX)
      if (max === undefined) return [] as Finding[]
      return conntrackFindings(yield* files.text(CONNTRACK_COUNT), max, thresholdPercent, tick.nowMs)
    })
})
