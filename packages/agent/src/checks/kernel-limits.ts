/**
 * KernelReady checks over /proc (reference 2.3): PIDs against pid_max/threads-max, open files against
 * file-max, zombie processes, and processes with huge environments.
 */
import { Effect } from "effect"
import type { KernelThresholds } from "../config/schema.ts"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection, pct } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

type Thresholds = typeof KernelThresholds.Type

const int = (s: string | undefined): number | undefined => {
  const n = Number.parseInt((s ?? "").trim(), 10)
  return Number.isFinite(n) ? n : undefined
}

/** The state letter of /proc/<pid>/stat: after the last ')' (comm may contain spaces and parens). */
export const procStatFields = (
  stat: string
): { readonly comm: string; readonly rest: readonly string[] } | undefined => {
  const open = stat.indexOf("(")
  const close = stat.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  return {
    comm: stat.slice(open + 1, close),
    rest: stat
      .slice(close + 2)
      .trim()
      .split(/\s+/)
  }
}

export const pidUsageCheck = (files: HostFiles, t: Thresholds, intervalMs: number): PeriodicCheck => ({
  name: "pid-usage",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const pidMax = int(yield* files.text("proc/sys/kernel/pid_max"))
      const threadsMax = int(yield* files.text("proc/sys/kernel/threads-max"))
      const max = Math.max(pidMax ?? 0, threadsMax ?? 0)
      if (max <= 0) return []
      const cur = (yield* tick.pids).length
      if ((100 * cur) / max < t.pidPercent) return []
      return [
        detection(
          "ApproachingKernelPidMax",
          `Approaching max number of PIDs. ${cur} of ${max} total, ${pct(cur, max)}%`,
          tick.nowMs
        )
      ]
    })
})

export const openFilesCheck = (files: HostFiles, t: Thresholds, intervalMs: number): PeriodicCheck => ({
  name: "open-files",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const fields = (yield* files.text("proc/sys/fs/file-nr"))?.trim().split(/\s+/).map(Number)
      const alloc = fields?.[0]
      const max = fields?.[2]
      if (alloc === undefined || max === undefined || !(max > 0) || !Number.isFinite(alloc)) return []
      if ((100 * alloc) / max < t.openFilesPercent) return []
      return [
        detection(
          "ApproachingMaxOpenFiles",
          `Approaching Exhaustion of max open file descriptors. ${alloc} of ${max} total, ${pct(alloc, max)}%`,
          tick.nowMs
        )
      ]
    })
})

/** Counts processes in state Z from /proc/<pid>/stat (NMA runs `ps aux`; this needs no host binary). */
export const zombiesCheck = (files: HostFiles, t: Thresholds, intervalMs: number): PeriodicCheck => ({
  name: "zombies",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      let zombies = 0
      for (const pid of yield* tick.pids) {
        const stat = yield* files.text(`proc/${pid}/stat`)
        if (stat !== undefined && procStatFields(stat)?.rest[0] === "Z") zombies++
      }
      return zombies >= t.zombieCount
        ? [
            detection(
              "ExcessiveZombieProcesses",
              `Detected ${zombies} zombie processes still running`,
              tick.nowMs
            )
          ]
        : []
    })
})

export const environmentCheck = (files: HostFiles, t: Thresholds, intervalMs: number): PeriodicCheck => ({
  name: "environment",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const out: Finding[] = []
      for (const pid of yield* tick.pids) {
        const environ = yield* files.bytes(`proc/${pid}/environ`)
        if (environ === undefined) continue // exited, or a kernel thread
        let count = 0
        let start = 0
        for (let i = 0; i <= environ.length; i++) {
          if (i === environ.length || environ[i] === 0) {
            if (i > start) count++
            start = i + 1
          }
        }
        if (count > t.environmentVariables)
          out.push(
            detection(
              "LargeEnvironment",
              `PID ${pid} has a higher than normal environment variable count at ${count}`,
              tick.nowMs,
              String(pid)
            )
          )
      }
      return out
    })
})
