/**
 * The cloud's scheduled events of the cached Nodes' machines, asked every `scheduledEvents.refreshSeconds` (one
 * batched `CloudProvider.scheduledEvents` call) and kept in between: the cache the plans are read from. A Node whose
 * events changed (a new one, one completed or cancelled) is reconciled at once. A failed query keeps the last answer:
 * a plan made from a real event stays, and decide's gates still apply to it.
 */
import { Effect, Metric } from "effect"
import type { CloudError, NodeRef, ScheduledEvent } from "../cloud/CloudProvider.ts"
import { isLive } from "../decide/scheduledEvents.ts"
import * as M from "../observability/scheduledEventMetrics.ts"

export interface ScheduledEventWatch {
  /** The node's events as last answered (none when never answered or the provider has none). */
  readonly of: (name: string) => ReadonlyArray<ScheduledEvent>
  /** The nodes with events as last answered: what the gauges look at (most machines have none). */
  readonly names: () => Iterable<string>
  /** Asks the cloud once; wakes the nodes whose events changed. */
  readonly refresh: (now: number) => Effect.Effect<void>
}

export interface WatchDeps {
  readonly query:
    | ((
        nodes: ReadonlyArray<NodeRef>
      ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<ScheduledEvent>>, CloudError>)
    | undefined
  readonly nodes: () => ReadonlyArray<NodeRef>
  readonly wake: (name: string) => void
}

const key = (events: ReadonlyArray<ScheduledEvent> | undefined) =>
  JSON.stringify((events ?? []).map((e) => [e.id, e.code, e.notBefore, e.notAfter, e.ended]))

export const makeScheduledEventWatch = (deps: WatchDeps): ScheduledEventWatch => {
  let known: ReadonlyMap<string, ReadonlyArray<ScheduledEvent>> = new Map()
  const refresh = (now: number): Effect.Effect<void> => {
    const query = deps.query
    if (query === undefined) return Effect.void
    return query(deps.nodes()).pipe(
      Effect.flatMap((fresh) =>
        Effect.suspend(() => {
          const before = known
          known = fresh
          for (const name of new Set([...before.keys(), ...fresh.keys()]))
            if (key(before.get(name)) !== key(fresh.get(name))) deps.wake(name)
          return gaugeCodes(fresh, now)
        })
      ),
      Effect.catch((e) =>
        Metric.update(M.scheduledEventQueryFailures, 1).pipe(
          Effect.andThen(
            Effect.logWarning("scheduled event query failed; keeping the last answer", { error: e.message })
          )
        )
      )
    )
  }
  // The events a repair was started for are journaled apart (PlannedRepairStore.ts): a restart keeps them.
  return { of: (name) => known.get(name) ?? [], names: () => known.keys(), refresh }
}

const CODES = [
  "instance-retirement",
  "instance-stop",
  "system-reboot",
  "instance-reboot",
  "system-maintenance"
] as const

const gaugeCodes = (events: ReadonlyMap<string, ReadonlyArray<ScheduledEvent>>, now: number) => {
  const counts = new Map<string, number>(CODES.map((c) => [c, 0]))
  for (const list of events.values())
    for (const e of list) if (isLive(e, now)) counts.set(e.code, (counts.get(e.code) ?? 0) + 1)
  return Effect.forEach(
    [...counts],
    ([code, n]) => Metric.update(Metric.withAttributes(M.scheduledEvents, { code }), n),
    { discard: true }
  )
}
