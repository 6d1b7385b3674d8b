/**
 * What-if replay: the controller itself (`controller/Controller.ts` `startController`: its informers, work queue,
 * sub-reconcilers, journal, waiting room, relapse ledgers, wake-ups and periodic work) run over a recording, with
 * two ports of its own: an API server in memory (whatif/memoryApiServer.ts) and Effect's TestClock. The cloud is
 * the kwok provider, whose machines are the API server's Nodes: a replacement joins `replacementDelayMs` after it
 * is asked for. Nothing here decides: the recording is written into the API server at its times (historyWriter.ts)
 * and what the controller decided and wrote is reported (replayRecord.ts).
 */
import { Clock, Effect, Layer, References } from "effect"
import { TestClock } from "effect/testing"
import { CloudProvider } from "../cloud/CloudProvider.ts"
import { makeKwokCloudProvider } from "../cloud/kwok/KwokCloudProvider.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { startController } from "../controller/Controller.ts"
import { kubeOver } from "../kube/Kube.ts"
import { noLogCaptureLayer } from "../repair/LogCaptureHook.ts"
import type { HistoryEvent } from "./history.ts"
import { makeHistoryWriter } from "./historyWriter.ts"
import { makeMemoryApiServer } from "./memoryApiServer.ts"
import { makeReplayRecord } from "./replayRecord.ts"
import { REPLACE_OVERHEAD_MS, type ReplayOptions, type WhatIfResult } from "./result.ts"

/**
 * The recording's span, as the replay runs it: from its start mark (else its first line) to `until`, its end mark
 * or its last line.
 */
export const spanOf = (events: ReadonlyArray<HistoryEvent>, options: ReplayOptions) => {
  const startMark = events.find((e) => e.kind === "mark" && e.mark === "start")?.atMs
  const from = startMark ?? events[0]?.atMs ?? options.until ?? 0
  const endMark = events.findLast((e) => e.kind === "mark" && e.mark === "end")?.atMs
  return { from, until: options.until ?? endMark ?? events.at(-1)?.atMs ?? from }
}

/**
 * The config the controller runs with in the replay: the user's, on the kwok provider, every recorded node
 * selected (the recorder selected them), and no resync within the recording (a change in memory is never missed,
 * and a resync of every node every few minutes of a week would be most of the replay's work).
 */
const loopConfig = (config: ControllerConfig, spanMs: number): ControllerConfig => ({
  ...config,
  cloudProvider: "kwok",
  nodeSelector: "",
  resyncSeconds: Math.max(config.resyncSeconds, Math.ceil(spanMs / 1000) + 86_400)
})

/** How long a replacement takes to join: `repairDurationMs` when given, else REPLACE_OVERHEAD_MS. */
const replacementDelayOf = (options: ReplayOptions) => options.repairDurationMs ?? REPLACE_OVERHEAD_MS

/** Replays `events` (in time order, as `parseHistory` gives them) under `config`. */
export const replay = (
  config: ControllerConfig,
  events: ReadonlyArray<HistoryEvent>,
  options: ReplayOptions = {}
): Effect.Effect<WhatIfResult> =>
  Effect.gen(function* () {
    const { from, until } = spanOf(events, options)
    yield* TestClock.setTime(from)
    const clock = yield* Clock.Clock
    const cfg = loopConfig(config, until - from)
    const api = makeMemoryApiServer(() => clock.currentTimeMillisUnsafe())
    const record = makeReplayRecord(cfg)
    api.observe((collection, type, object) =>
      record.changed(collection, type, object, clock.currentTimeMillisUnsafe())
    )
    const kube = kubeOver(api.http, api.http, "what-if")
    const writer = yield* makeHistoryWriter(cfg, api, record)
    const cloud = yield* makeKwokCloudProvider(kube, {
      namespace: cfg.namespace,
      zonalShiftConfigMap: cfg.kwok.zonalShiftConfigMap,
      scheduledEventsConfigMap: cfg.kwok.scheduledEventsConfigMap,
      replacementDelayMs: replacementDelayOf(options),
      poolLabel: cfg.poolLabel
    })
    yield* writer.emptyCloud
    yield* startController(cfg, kube, 64, record.decided).pipe(
      Effect.provide(Layer.merge(Layer.succeed(CloudProvider, cloud), noLogCaptureLayer))
    )
    yield* Effect.forkScoped(writer.write(events, until))
    yield* TestClock.setTime(until)
    return {
      from,
      to: until,
      nodes: new Set(events.flatMap((e) => ("node" in e ? [e.node] : []))).size,
      events: events.length,
      ignored: writer.ignored(),
      ...record.result(until)
    }
  }).pipe(
    // The API server in memory fails nothing the controller's start needs.
    Effect.orDie,
    Effect.scoped,
    Effect.provide(TestClock.layer({ warningDelay: "1 hour" })),
    Effect.provideService(References.MinimumLogLevel, "None")
  )
