/**
 * Coalesces terminations into few TerminateInstances calls (as Karpenter does: a short window,
 * at most 500 ids per call). EC2 fails a whole call if one id is unknown; then each id is retried
 * alone so one stale node does not block the rest.
 */
import { Deferred, type Duration, Effect, Queue } from "effect"
import type { CloudError, InstanceState } from "../CloudProvider.ts"

export const MAX_TERMINATE_BATCH = 500

/** What one TerminateInstances call returns: each id's state after the call, or "not-found" for all. */
export type TerminateCall = (
  instanceIds: ReadonlyArray<string>
) => Effect.Effect<ReadonlyMap<string, InstanceState> | "not-found", CloudError>

interface Pending {
  readonly instanceId: string
  readonly done: Deferred.Deferred<InstanceState, CloudError>
}

/** Starts the batching loop in the current scope; returns `terminate(instanceId)`. */
export const makeTerminateBatcher = Effect.fn("makeTerminateBatcher")(function* (
  call: TerminateCall,
  window: Duration.Input = "100 millis"
) {
  const queue = yield* Queue.unbounded<Pending>()

  const settle = (batch: ReadonlyArray<Pending>, result: ReadonlyMap<string, InstanceState> | "not-found") =>
    Effect.forEach(batch, (p) =>
      Deferred.succeed(
        p.done,
        result === "not-found" ? "not-found" : (result.get(p.instanceId) ?? "shutting-down")
      )
    )

  const flush = (batch: ReadonlyArray<Pending>): Effect.Effect<void> => {
    const ids = [...new Set(batch.map((p) => p.instanceId))]
    return call(ids).pipe(
      Effect.flatMap((result) =>
        result === "not-found" && ids.length > 1
          ? Effect.forEach(ids, (id) => flush(batch.filter((p) => p.instanceId === id)), { discard: true })
          : settle(batch, result)
      ),
      Effect.catch((error) => Effect.forEach(batch, (p) => Deferred.fail(p.done, error))),
      Effect.asVoid
    )
  }

  yield* Effect.gen(function* () {
    const first = yield* Queue.take(queue)
    yield* Effect.sleep(window)
    const rest = yield* Queue.clear(queue)
    const all = [first, ...rest]
    for (let i = 0; i < all.length; i += MAX_TERMINATE_BATCH) {
      yield* flush(all.slice(i, i + MAX_TERMINATE_BATCH))
    }
  }).pipe(Effect.forever, Effect.forkScoped)

  return (instanceId: string): Effect.Effect<InstanceState, CloudError> =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<InstanceState, CloudError>()
      yield* Queue.offer(queue, { instanceId, done })
      return yield* Deferred.await(done)
    })
})
