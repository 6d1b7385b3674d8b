/**
 * EBS{Volume,Instance}{IOPS,Throughput}Exceeded (reference 2.7). For every NVMe controller whose model
 * is "Amazon Elastic Block Store" (<hostRoot>/sys/class/nvme/<ctrl>/model), read the vendor log page 0xD0
 * with `nvme get-log /dev/<ctrl> --log-id=0xd0 --log-len=4096 --raw-binary` and decode it per the
 * "Amazon EBS detailed performance statistics" layout (little-endian: u32 magic 0x3C23B510, 4 reserved
 * bytes, then u64 counters; the four "performance exceeded" totals, in microseconds, at offsets 56, 64,
 * 72 and 80). An increase above the threshold since the previous sample is a Warning Event; the first
 * sample only records (NMA started from 0 and fired on long-lived volumes).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export const EBS_STATS_MAGIC = 0x3c23b510
const EBS_MODEL = "Amazon Elastic Block Store"

export const EBS_COUNTERS = [
  { offset: 56, reason: "EBSVolumeIOPSExceeded", what: "exceeded configured IOPS" },
  { offset: 64, reason: "EBSVolumeThroughputExceeded", what: "exceeded configured throughput" },
  { offset: 72, reason: "EBSInstanceIOPSExceeded", what: "exceeded instance IOPS" },
  { offset: 80, reason: "EBSInstanceThroughputExceeded", what: "exceeded instance throughput" }
] as const

/** The four exceeded-time counters (µs), or undefined when the page is not an EBS stats page. */
export const decodeEbsStats = (page: Buffer): readonly number[] | undefined => {
  if (page.length < 88 || page.readUInt32LE(0) !== EBS_STATS_MAGIC) return undefined
  return EBS_COUNTERS.map((c) => Number(page.readBigUInt64LE(c.offset)))
}

/** `vol0123abcd` -> `vol-0123abcd`. */
export const volumeId = (serial: string): string => serial.trim().replace(/^vol(?!-)/, "vol-")

export const ebsPerformanceCheck = (
  files: HostFiles,
  runner: CommandRunner["Service"],
  thresholdSeconds: number,
  intervalMs: number
): PeriodicCheck => {
  const previous = new Map<string, readonly number[]>()
  return {
    name: "ebs-performance",
    monitor: "storage",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        const seen = new Set<string>()
        for (const ctrl of yield* files.list("sys/class/nvme")) {
          if ((yield* files.text(`sys/class/nvme/${ctrl}/model`))?.trim() !== EBS_MODEL) continue
          const vol = volumeId((yield* files.text(`sys/class/nvme/${ctrl}/serial`)) ?? ctrl)
          if (seen.has(vol)) continue
          seen.add(vol)
          const r = yield* runner
            .runBinary(
              "nvme",
              ["get-log", `/dev/${ctrl}`, "--log-id=0xd0", "--log-len=4096", "--raw-binary"],
              { timeoutMs: 5000 }
            )
            .pipe(
              Effect.catch((e) =>
                Effect.logWarning("nvme get-log failed", { ctrl, error: e.message }).pipe(
                  Effect.as(undefined)
                )
              )
            )
          if (r === undefined) continue
          if (r.exitCode !== 0) {
            yield* Effect.logWarning("nvme get-log failed", { ctrl, error: exitDetail(r) })
            continue
          }
          const counters = decodeEbsStats(r.stdout)
          if (counters === undefined) {
            yield* Effect.logWarning("nvme log page 0xD0 is not an EBS statistics page", { ctrl })
            continue
          }
          const before = previous.get(vol)
          previous.set(vol, counters)
          if (before === undefined) continue
          EBS_COUNTERS.forEach((c, i) => {
            const deltaUs = counters[i]! - before[i]!
            if (deltaUs > thresholdSeconds * 1_000_000)
              out.push(
                detection(
                  c.reason,
                  `Volume ${vol} (${ctrl}) reported ${c.what} for ${(deltaUs / 1e6).toFixed(1)}s`,
                  tick.nowMs,
                  vol
                )
              )
          })
        }
        return out
      })
  }
}
