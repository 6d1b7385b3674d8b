/**
 * The acting thread's event loop delay (node:perf_hooks), written every 15 s as p50, p99 and max of the window:
 * how long the controller's own work kept a ready callback (a timer, an answer) waiting. The bench prints it
 * next to the Lease renewals' latency (controller/LeaseKeeper.ts).
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Effect, Metric } from "effect"
import { eventLoopDelay } from "./metrics.ts"

const WINDOW = "15 seconds"
/** The sampling timer's period: each sample is a period plus the delay, so the period is taken off. */
const RESOLUTION_MS = 20

export const eventLoopDelayLoop = Effect.suspend(() => {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  h.enable()
  const write = (quantile: string, ns: number) =>
    Metric.update(
      Metric.withAttributes(eventLoopDelay, { quantile }),
      Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000)
    )
  // Read at the end of each window (suspended: an argument computed once would repeat the first reading).
  const flush = Effect.suspend(() => {
    const [p50, p99, max] = [h.percentile(50), h.percentile(99), h.max]
    h.reset()
    return write("0.5", p50).pipe(Effect.andThen(write("0.99", p99)), Effect.andThen(write("max", max)))
  })
  return Effect.forever(Effect.sleep(WINDOW).pipe(Effect.andThen(flush))).pipe(
    Effect.ensuring(Effect.sync(() => h.disable()))
  )
})
