/**
 * The process's memory (RSS and V8 heap in use), written every 15 s by the binary (program.ts): the process's
 * figures, not the controller loop's, so the what-if replay, which runs that loop in its own process, does not
 * write them (process.memoryUsage() walks the heap spaces: a noticeable cost at every tick of a simulated week).
 */
import { Effect, Metric } from "effect"
import { heapUsed, residentMemory } from "./metrics.ts"

const write = Effect.suspend(() => {
  const mem = process.memoryUsage()
  return Metric.update(residentMemory, mem.rss).pipe(Effect.andThen(Metric.update(heapUsed, mem.heapUsed)))
})

export const processMetricsLoop = Effect.forever(write.pipe(Effect.andThen(Effect.sleep("15 seconds"))))
