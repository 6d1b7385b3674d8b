/**
 * EFAErrorMetric (reference 2.5): hardware counters of Elastic Fabric Adapter ports,
 * <hostRoot>/sys/class/infiniband/<dev>/ports/<port>/hw_counters/<counter>, for devices whose PCI vendor
 * is 0x1d0f and device id starts with 0xefa. Each counter's increase is paid from a bucket refilling one
 * token per second (NMA's bursts); first readings are only recorded (NMA compared them against 0).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { makeCounterTracker } from "./counter-tracker.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export const EFA_COUNTER_BURSTS: Readonly<Record<string, number>> = {
  rx_drops: 100,
  rdma_write_wr_err: 100,
  rdma_read_wr_err: 100,
  unresponsive_remote_events: 100,
  impaired_remote_conn_events: 100,
  retrans_bytes: 1_000_000,
  retrans_pkts: 1_000,
  retrans_timeout_events: 100
}

export const efaCountersCheck = (files: HostFiles, intervalMs: number): PeriodicCheck => {
  const tracker = makeCounterTracker()
  return {
    name: "efa-counters",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        for (const dev of yield* files.list("sys/class/infiniband")) {
          const base = `sys/class/infiniband/${dev}`
          const vendor = (yield* files.text(`${base}/device/vendor`))?.trim()
          const device = (yield* files.text(`${base}/device/device`))?.trim()
          if (vendor !== "0x1d0f" || device?.startsWith("0xefa") !== true) continue
          for (const port of yield* files.list(`${base}/ports`)) {
            for (const [counter, burst] of Object.entries(EFA_COUNTER_BURSTS)) {
              const raw = yield* files.text(`${base}/ports/${port}/hw_counters/${counter}`)
              const value = Number(raw?.trim())
              if (raw === undefined || !Number.isFinite(value)) continue
              const jump = tracker.observe(`${dev}:${port}/${counter}`, value, tick.nowMs, {
                burst,
                perSecond: 1
              })
              if (jump !== undefined)
                out.push(
                  detection(
                    "EFAErrorMetric",
                    `${counter} increased from ${jump.from} to ${jump.to} for device:port [${dev}:${port}]`,
                    tick.nowMs,
                    `${dev}:${port}/${counter}`
                  )
                )
            }
          }
        }
        return out
      })
  }
}
