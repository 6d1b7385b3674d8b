// The NVIDIA monitor wired as main.ts wires it: its push paths and DCGM session on their own fibers, its polls as
// checks of a scheduler (here one of its own, with no other checks).
import { Effect, type Scope } from "effect"
import type { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import {
  makeNvidiaMonitor,
  type NvidiaMonitorContext,
  type NvidiaMonitorSinks
} from "../../src/monitors/nvidia/monitor.ts"
import type { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { runScheduler, type SchedulerOptions } from "../../src/scheduler/scheduler.ts"

export const runNvidiaMonitorScheduled = (
  ctx: NvidiaMonitorContext,
  sinks: NvidiaMonitorSinks,
  options: { readonly spacingMs?: number; readonly onRun?: SchedulerOptions["onRun"] } = {}
): Effect.Effect<void, never, NvidiaLibraries | XidDeduplicator | Scope.Scope> =>
  Effect.gen(function* () {
    const monitor = yield* makeNvidiaMonitor(ctx, sinks)
    yield* Effect.forkScoped(
      runScheduler({
        checks: monitor.checks,
        sink: () => Effect.void,
        listPids: Effect.succeed([]),
        spacingMs: options.spacingMs ?? 0,
        ...(options.onRun === undefined ? {} : { onRun: options.onRun })
      })
    )
    return yield* monitor.run
  })
