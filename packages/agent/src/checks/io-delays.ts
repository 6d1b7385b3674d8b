/**
 * IODelays (reference 2.7): field 42 of /proc/<pid>/stat, `delayacct_blkio_ticks` (clock ticks of 1/100 s
 * spent waiting for block I/O). The increase since the previous sample of the same (pid, comm) is
 * compared with the threshold; a first sighting only records, and samples older than 15 minutes are
 * dropped (pid reuse).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"
import { procStatFields } from "./kernel-limits.ts"

const USER_HZ = 100
const SAMPLE_TTL_MS = 15 * 60_000
/** Field 42 is the 40th field after `pid (comm)`. */
const BLKIO_INDEX = 42 - 3

export const blkioTicks = (stat: string): { readonly comm: string; readonly ticks: number } | undefined => {
  const f = procStatFields(stat)
  const ticks = Number(f?.rest[BLKIO_INDEX])
  return f === undefined || !Number.isFinite(ticks) ? undefined : { comm: f.comm, ticks }
}

export const ioDelaysCheck = (
  files: HostFiles,
  thresholdSeconds: number,
  intervalMs: number
): PeriodicCheck => {
  const previous = new Map<string, { ticks: number; atMs: number }>()
  return {
    name: "io-delays",
    monitor: "storage",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        const now = tick.nowMs
        for (const pid of yield* tick.pids) {
          const stat = yield* files.text(`proc/${pid}/stat`)
          const s = stat === undefined ? undefined : blkioTicks(stat)
          if (s === undefined) continue
          const key = `${pid}/${s.comm}`
          const before = previous.get(key)
          previous.set(key, { ticks: s.ticks, atMs: now })
          if (before === undefined || now - before.atMs > SAMPLE_TTL_MS) continue
          const seconds = (s.ticks - before.ticks) / USER_HZ
          if (seconds >= thresholdSeconds)
            out.push(
              detection(
                "IODelays",
                `Process ${s.comm} (PID ${pid}) incurred ${seconds.toFixed(1)} seconds of I/O delay`,
                now,
                key
              )
            )
        }
        for (const [key, v] of previous) if (now - v.atMs > SAMPLE_TTL_MS) previous.delete(key)
        return out
      })
  }
}
