/**
 * The smallest Effect program shaped like the agent, for bench/runtime-floor.ts: a service from a Layer,
 * a Schema decode, JSON logs, two fibers on a Schedule. Bundled as the agent is, run with its flags.
 */
import { Context, Effect, Layer, Logger, Schedule, Schema } from "effect"

class Counter extends Context.Service<Counter, { readonly next: () => number }>()("bench/Counter") {}

const Config = Schema.Struct({
  name: Schema.String,
  limit: Schema.optional(Schema.Number),
  rules: Schema.Array(Schema.Struct({ source: Schema.Literals(["dmesg", "journal"]) }))
})

const program = Effect.gen(function* () {
  const counter = yield* Counter
  const config = yield* Schema.decodeUnknownEffect(Config)({ name: "floor", rules: [{ source: "dmesg" }] })
  yield* Effect.logInfo("started", { name: config.name })
  yield* Effect.forkChild(Effect.repeat(Effect.sync(counter.next), Schedule.spaced("1 second")))
  yield* Effect.forkChild(Effect.repeat(Effect.logDebug("tick"), Schedule.spaced("5 seconds")))
  return yield* Effect.never
})

let n = 0
Effect.runFork(
  program.pipe(
    Effect.provide(Layer.succeed(Counter, { next: () => n++ })),
    Effect.provide(Logger.layer([Logger.consoleJson]))
  )
)
