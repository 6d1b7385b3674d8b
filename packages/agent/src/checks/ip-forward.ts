/** NetworkSysctl (reference 2.5): net.ipv4.ip_forward must be 1 for pod traffic to be routed. */
import { Effect } from "effect"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export const ipForwardCheck = (files: HostFiles, intervalMs: number): PeriodicCheck => ({
  name: "ip-forward",
  monitor: "networking",
  intervalMs,
  run: (tick) =>
    files
      .text("proc/sys/net/ipv4/ip_forward")
      .pipe(
        Effect.map((v) =>
          v !== undefined && v.trim() !== "1"
            ? [
                detection(
                  "NetworkSysctl",
                  `A network related sysctl parameter may be misconfigured: net.ipv4.ip_forward = ${v.trim()}`,
                  tick.nowMs,
                  "net.ipv4.ip_forward"
                )
              ]
            : []
        )
      )
})
