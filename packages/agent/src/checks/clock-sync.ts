/**
 * ClockUnsynchronized (reference 2.3). NMA calls adjtimex(2) and tests STA_UNSYNC; Node has no binding
 * for that syscall. We ask `timedatectl show -p NTPSynchronized --value` on the host instead, which
 * answers from adjtimex too, whichever NTP client (chrony, timesyncd, ntpd) disciplines the clock:
 * timedated's ntp_synced() is `maxerror < 16 s` and ignores STA_UNSYNC "as it may have been set to
 * prevent the kernel from touching the RTC" (systemd src/timedate/timedated.c). The kernel itself sets
 * STA_UNSYNC once maxerror passes 16 s (NTP_PHASE_LIMIT, kernel/time/ntp.c), so both verdicts agree on a
 * clock nothing disciplines; they differ only where a daemon sets STA_UNSYNC on purpose, where NMA's test
 * fires on a synchronised clock and ours stays silent. When timedatectl is unavailable (no systemd, no
 * D-Bus) the check reports nothing, as NMA does when adjtimex fails.
 */
import { Effect } from "effect"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"

/** "yes" / "no" from timedatectl; anything else is "cannot tell". */
export const parseNtpSynchronized = (stdout: string): boolean | undefined => {
  const v = stdout.trim()
  return v === "yes" ? true : v === "no" ? false : undefined
}

export const clockSyncCheck = (runner: CommandRunner["Service"], intervalMs: number): PeriodicCheck => ({
  name: "clock-sync",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    runner.run("timedatectl", ["show", "--property=NTPSynchronized", "--value"], { timeoutMs: 5000 }).pipe(
      Effect.flatMap((r) =>
        r.exitCode !== 0
          ? Effect.logWarning("timedatectl failed; clock sync not watched this run", {
              error: exitDetail(r)
            }).pipe(Effect.as([]))
          : Effect.succeed(
              parseNtpSynchronized(r.stdout) === false
                ? [
                    detection(
                      "ClockUnsynchronized",
                      "The kernel clock is not synchronized to any time source (STA_UNSYNC); time drift may break time-sensitive workloads",
                      tick.nowMs
                    )
                  ]
                : []
            )
      ),
      Effect.catch((e) =>
        Effect.logWarning("timedatectl failed; clock sync not watched this run", { error: e.message }).pipe(
          Effect.as([])
        )
      )
    )
})
