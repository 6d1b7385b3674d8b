/**
 * InterfaceNotUp / InterfaceNotRunning / MissingLoopbackInterface (reference 2.5), read from
 * <hostRoot>/sys/class/net/<if>/{flags,operstate,address} so it sees the host's interfaces whatever the
 * agent's network namespace. As in NMA: `docker*` and excluded names are skipped, and so are non-loopback
 * interfaces without BROADCAST or MULTICAST (tunnels, dummies); an interface must be down in two
 * consecutive samples (10-minute memory) to be reported. Unlike NMA: every faulty interface is reported
 * (not only the first), an empty bridge is never "not running" (issue #204), and an interface that comes
 * back (or disappears) resolves its fault, so NetworkingReady returns to True.
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection, resolution } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

const IFF_UP = 0x1
const IFF_BROADCAST = 0x2
const IFF_LOOPBACK = 0x8
const IFF_MULTICAST = 0x1000
const SAMPLE_TTL_MS = 10 * 60_000

export interface InterfaceSample {
  readonly name: string
  readonly flags: number
  readonly operstate: string
  readonly mac: string
  /** A bridge with no ports: it has nothing to carry, so it is never "running". */
  readonly emptyBridge: boolean
}

type Fault = "InterfaceNotUp" | "InterfaceNotRunning"

/** NMA's notion of "not running": the RUNNING flag, which the kernel derives from operstate. */
const running = (s: InterfaceSample) =>
  s.operstate === "up" || s.operstate === "unknown" || s.operstate === "dormant"

export const interfaceFault = (s: InterfaceSample): Fault | undefined =>
  (s.flags & IFF_UP) === 0
    ? "InterfaceNotUp"
    : !running(s) && !s.emptyBridge
      ? "InterfaceNotRunning"
      : undefined

export const interfacesCheck = (
  files: HostFiles,
  excluded: readonly string[],
  intervalMs: number
): PeriodicCheck => {
  const excludes = excluded.map((r) => new RegExp(r))
  /** Previous sample's faults, by interface, with when they were seen. */
  let previous = new Map<string, { fault: Fault; atMs: number }>()
  /** What we reported and have not yet resolved. */
  const reported = new Map<string, Fault>()
  let loopbackReported = false
  return {
    name: "interfaces",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        const now = tick.nowMs
        const current = new Map<string, { fault: Fault; atMs: number }>()
        let loopback = false
        const names = yield* files.list("sys/class/net")
        for (const name of names) {
          const flags = Number.parseInt((yield* files.text(`sys/class/net/${name}/flags`))?.trim() ?? "", 16)
          if (!Number.isFinite(flags)) continue
          if ((flags & IFF_LOOPBACK) !== 0) loopback = true
          if (name.startsWith("docker") || excludes.some((r) => r.test(name))) continue
          if (
            (flags & IFF_LOOPBACK) === 0 &&
            ((flags & IFF_BROADCAST) === 0 || (flags & IFF_MULTICAST) === 0)
          )
            continue
          const bridge = yield* files.exists(`sys/class/net/${name}/bridge`)
          const sample: InterfaceSample = {
            name,
            flags,
            operstate: (yield* files.text(`sys/class/net/${name}/operstate`))?.trim() ?? "unknown",
            mac: (yield* files.text(`sys/class/net/${name}/address`))?.trim() ?? "",
            emptyBridge: bridge && (yield* files.list(`sys/class/net/${name}/brif`)).length === 0
          }
          const fault = interfaceFault(sample)
          if (fault !== undefined) {
            current.set(name, { fault, atMs: now })
            const before = previous.get(name)
            if (before?.fault === fault && now - before.atMs <= SAMPLE_TTL_MS) {
              const other: Fault = fault === "InterfaceNotUp" ? "InterfaceNotRunning" : "InterfaceNotUp"
              if (reported.get(name) === other) out.push(resolution(other, now, name))
              reported.set(name, fault)
              out.push(
                detection(fault, `Interface Name: "${name}", MAC: "${sample.mac}" is not up`, now, name)
              )
            }
          }
        }
        for (const [name, fault] of reported) {
          if (!current.has(name)) {
            out.push(resolution(fault, now, name))
            reported.delete(name)
          }
        }
        if (!loopback) {
          loopbackReported = true
          out.push(
            detection(
              "MissingLoopbackInterface",
              "The loopback interface is missing from this instance. Without it, many services which depend on local connectivity will fail",
              now
            )
          )
        } else if (loopbackReported) {
          loopbackReported = false
          out.push(resolution("MissingLoopbackInterface", now))
        }
        previous = current
        return out
      })
  }
}
