/**
 * IPAMDNotRunning (reference 2.5). Only where the AWS VPC CNI is installed (a
 * <hostRoot>/var/log/pods/*_aws-node-* directory holding an `aws-vpc-cni-init` container), so nodes
 * running another CNI never see it (NMA issue #28). IPAMD runs when any process's comm or cmdline under
 * <hostRoot>/proc names `aws-k8s-agent`. Two consecutive misses within 15 minutes report it; the first
 * sighting of IPAMD running again resolves it, so NetworkingReady returns to True (NMA issue #250).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection, resolution } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

const PROCESS = "aws-k8s-agent"
const MISS_WINDOW_MS = 15 * 60_000

export const vpcCniInstalled = (files: HostFiles): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (const dir of yield* files.list("var/log/pods")) {
      if (!dir.includes("_aws-node-")) continue
      if ((yield* files.list(`var/log/pods/${dir}`)).includes("aws-vpc-cni-init")) return true
    }
    return false
  })

export const ipamdRunning = (files: HostFiles, pids: readonly number[]): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (const pid of pids) {
      const comm = yield* files.text(`proc/${pid}/comm`)
      if (comm?.includes(PROCESS)) return true
      const cmdline = yield* files.text(`proc/${pid}/cmdline`)
      if (cmdline?.includes(PROCESS)) return true
    }
    return false
  })

export const ipamdCheck = (files: HostFiles, intervalMs: number): PeriodicCheck => {
  let firstMissAt: number | undefined
  return {
    name: "ipamd",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const now = tick.nowMs
        if (!(yield* vpcCniInstalled(files))) {
          firstMissAt = undefined
          return [resolution("IPAMDNotRunning", now)]
        }
        if (yield* ipamdRunning(files, yield* tick.pids)) {
          firstMissAt = undefined
          return [resolution("IPAMDNotRunning", now)]
        }
        if (firstMissAt === undefined || now - firstMissAt > MISS_WINDOW_MS) {
          firstMissAt = now
          return [] as Finding[]
        }
        return [
          detection(
            "IPAMDNotRunning",
            "The AWS VPC CNI was detected on this node but IPAMD was not found running",
            now
          )
        ]
      })
  }
}
