/**
 * XFSSmallAverageClusterSize (reference 2.7): for every XFS filesystem in the host's mountinfo, run
 * `xfs_db -r -c "freesp -s" <device>` and compare "average free extent size" with the threshold. A failing
 * device is logged and skipped (NMA aborted the whole cycle).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

/** Sources of XFS mounts in a mountinfo file, deduplicated, in order. */
export const xfsDevices = (mountinfo: string): string[] => {
  const out: string[] = []
  for (const line of mountinfo.split("\n")) {
    const sep = line.indexOf(" - ")
    if (sep < 0) continue
    const [fstype, source] = line.slice(sep + 3).split(" ")
    if (fstype === "xfs" && source !== undefined && source.startsWith("/dev/") && !out.includes(source))
      out.push(source)
  }
  return out
}

export const parseAverageFreeExtent = (stdout: string): number | undefined => {
  const m = /average free extent size\s+([0-9.]+)/.exec(stdout)
  return m === null ? undefined : Number(m[1])
}

export const xfsFragmentationCheck = (
  files: HostFiles,
  runner: CommandRunner["Service"],
  minAverage: number,
  intervalMs: number
): PeriodicCheck => ({
  name: "xfs-fragmentation",
  monitor: "storage",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const out: Finding[] = []
      for (const dev of xfsDevices((yield* files.text("proc/1/mountinfo")) ?? "")) {
        const r = yield* runner
          .run("xfs_db", ["-r", "-c", "freesp -s", dev], { timeoutMs: 30_000 })
          .pipe(
            Effect.catch((e) =>
              Effect.logWarning("xfs_db failed", { dev, error: e.message }).pipe(Effect.as(undefined))
            )
          )
        if (r === undefined) continue
        if (r.exitCode !== 0) {
          yield* Effect.logWarning("xfs_db failed", { dev, error: exitDetail(r) })
          continue
        }
        const avg = parseAverageFreeExtent(r.stdout)
        if (avg === undefined)
          yield* Effect.logWarning("xfs_db printed no average free extent size", {
            dev,
            output: r.stdout.slice(0, 500)
          })
        else if (avg < minAverage)
          out.push(
            detection(
              "XFSSmallAverageClusterSize",
              `The XFS Average Cluster size is small, which may prevent new files from being created due to free space fragmentation (${dev}: ${avg})`,
              tick.nowMs,
              dev
            )
          )
      }
      return out
    })
})
