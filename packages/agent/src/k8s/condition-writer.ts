/**
 * Owns the agent's five NodeConditions. Findings are queued; one fiber folds each batch into the
 * condition state (condition-state.ts) and, when the desired conditions differ from what the API server
 * holds or a heartbeat is due, sends one strategic-merge patch of `status.conditions` to the status
 * subresource. It never reads-modifies-writes the list and never writes a type it does not own.
 * A failed patch is retried with backoff; the state is kept, so nothing is lost.
 */
import type { ConditionType } from "@nodemend/reason-codes"
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Layer,
  Metric,
  Option,
  Queue,
  Ref,
  Schedule
} from "effect"
import { conditionStatus, conditionWritesTotal, inc } from "../health/metrics.ts"
import type { Finding } from "../model.ts"
import {
  applyFinding,
  conditionPatch,
  desiredConditions,
  nextHeartbeatAt,
  restoreState,
  type ConditionState,
  type CurrentCondition,
  type ReadyTexts,
  DEFAULT_READY_TEXTS
} from "./condition-state.ts"
import { KubeApi } from "./kube-api.ts"

export class ConditionWriter extends Context.Service<
  ConditionWriter,
  {
    readonly submit: (findings: readonly Finding[]) => Effect.Effect<void>
    /** Completes once the first reconcile reached the API server (drives /readyz). */
    readonly ready: Effect.Effect<void>
    /** The Node's conditions as of the last successful patch or read. */
    readonly current: Effect.Effect<readonly CurrentCondition[]>
    /** The Node's uid, read at start-up. */
    readonly nodeUid: Effect.Effect<string>
  }
>()("@nodemend/agent/ConditionWriter") {}

export interface ConditionWriterOptions {
  readonly managed: ReadonlySet<ConditionType>
  readonly bootId: string
  readonly heartbeatMs: number
  readonly readyTexts?: ReadyTexts
}

const MAX_BATCH_WAIT = Duration.hours(24)
const RETRY_MS = 1000

export const conditionWriterLayer = (
  options: ConditionWriterOptions
): Layer.Layer<ConditionWriter, never, KubeApi> =>
  Layer.effect(
    ConditionWriter,
    Effect.gen(function* () {
      const kube = yield* KubeApi
      const queue = yield* Queue.unbounded<Finding>()
      const ready = yield* Deferred.make<void>()
      const uid = yield* Deferred.make<string>()
      const currentRef = yield* Ref.make<readonly CurrentCondition[]>([])
      const ready_ = options.readyTexts ?? DEFAULT_READY_TEXTS

      const reconcile = Effect.fn("ConditionWriter.reconcile")(function* (state: ConditionState) {
        const now = yield* Clock.currentTimeMillis
        const current = yield* Ref.get(currentRef)
        const desired = desiredConditions(state, options.managed, options.bootId, ready_)
        const entries = conditionPatch(desired, current, now, options.heartbeatMs)
        // Nothing to write: the Node read from the API server already shows the desired conditions (an agent
        // restarted within a heartbeat of the last write). That is ready too, not only after the next write.
        if (entries.length === 0) return yield* Deferred.succeed(ready, undefined).pipe(Effect.as(true))
        const result = yield* kube.patchConditions(entries).pipe(
          Effect.tap((after) => Ref.set(currentRef, after)),
          Effect.tap(() => inc(conditionWritesTotal, { outcome: "ok" })),
          Effect.as(true),
          Effect.catch((e) =>
            Effect.logWarning("condition patch failed; retrying", { error: e.message }).pipe(
              Effect.andThen(inc(conditionWritesTotal, { outcome: "failed" })),
              Effect.as(false)
            )
          )
        )
        if (result) {
          for (const [type, d] of desired)
            yield* Metric.update(
              Metric.withAttributes(conditionStatus, { type }),
              d.status === "False" ? 1 : 0
            )
          yield* Deferred.succeed(ready, undefined)
        }
        return result
      })

      const loop = Effect.gen(function* () {
        const node = yield* kube.readNode.pipe(
          Effect.tapError((e) =>
            Effect.logWarning("reading the Node failed; retrying", { error: e.message })
          ),
          Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("30 seconds")]))
        )
        yield* Deferred.succeed(uid, node.uid)
        yield* Ref.set(currentRef, node.conditions)
        let state = restoreState(
          options.managed,
          node.conditions,
          options.bootId,
          yield* Clock.currentTimeMillis
        )
        let ok = yield* reconcile(state)
        while (true) {
          const now = yield* Clock.currentTimeMillis
          const beat = nextHeartbeatAt(yield* Ref.get(currentRef), options.heartbeatMs)
          const waitMs = ok
            ? beat === undefined
              ? Duration.toMillis(MAX_BATCH_WAIT)
              : Math.max(0, beat - now)
            : RETRY_MS
          const batch = yield* Queue.takeAll(queue).pipe(Effect.timeoutOption(Duration.millis(waitMs)))
          if (Option.isSome(batch)) state = batch.value.reduce(applyFinding, state)
          ok = yield* reconcile(state)
        }
      })
      yield* Effect.forkScoped(loop)

      return ConditionWriter.of({
        submit: (findings) =>
          findings.length === 0 ? Effect.void : Queue.offerAll(queue, findings).pipe(Effect.asVoid),
        ready: Deferred.await(ready),
        current: Ref.get(currentRef),
        nodeUid: Deferred.await(uid)
      })
    })
  )
