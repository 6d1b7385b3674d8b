/** ZramHighUsage (reference 2.3): /sys/block/zram*: mm_stat orig_data_size / disksize. */
import { Effect } from "effect"
import type { KernelThresholds } from "../config/schema.ts"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection, pct } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export const zramCheck = (
  files: HostFiles,
  t: typeof KernelThresholds.Type,
  intervalMs: number
): PeriodicCheck => ({
  name: "zram",
  monitor: "kernel",
  intervalMs,
  run: (tick) =>
    Effect.gen(function* () {
      const out: Finding[] = []
      for (const dev of (yield* files.list("sys/block")).filter((d) => d.startsWith("zram"))) {
        const orig = Number((yield* files.text(`sys/block/${dev}/mm_stat`))?.trim().split(/\s+/)[0])
        const size = Number((yield* files.text(`sys/block/${dev}/disksize`))?.trim())
        if (!(orig > 0) || !(size > 0)) continue
        if ((100 * orig) / size > t.zramPercent)
          out.push(
            detection("ZramHighUsage", `ZRAM device ${dev} at ${pct(orig, size)}% capacity`, tick.nowMs, dev)
          )
      }
      return out
    })
})
