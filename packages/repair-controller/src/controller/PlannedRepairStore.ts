/**
 * Where the planned repairs' journal lives (domain/PlannedRepairs.ts): in memory and in one ConfigMap of the
 * controller's namespace (`nodemend-planned-repairs`).
 * - An acted mark is written when a repair's record is written for the event, journal first, memory after, and read
 *   before any repair starts: a restart neither plans the event again (a second reboot) nor forgets a plan (the mark
 *   is written only once the repair is recorded, so a repair refused or deferred leaves the event planned). A crash
 *   between the record's write and the mark's costs at most one repeat, the event planned again once its repair ends.
 * - The plans are what the reconcile last decided per node; written with every other change of the next FLUSH_MS
 *   (as the sightings are), for `kubectl nodemend status` and `timeline`. Losing one costs a stale view, not a repair.
 * Unreadable contents are logged and replaced at the next write.
 */
import type { KubeError } from "@nodemend/kube-access"
import { Effect, Result, Semaphore } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import {
  type ActedMark,
  PLANNED_REPAIRS_CONFIGMAP,
  type PlanView,
  parseActed,
  serializeActed,
  serializePlans,
  withActed
} from "../domain/PlannedRepairs.ts"
import type { KubeShape } from "../kube/Kube.ts"
import { makeDirtyFlag } from "./DirtyFlag.ts"

/** How long plan changes wait to be written together. */
export const FLUSH_MS = 1_000

export interface PlannedRepairStore {
  readonly load: Effect.Effect<void, KubeError>
  /** A repair was started for the event (see ScheduledEventWatch): it is planned no more. */
  readonly acted: (eventId: string) => boolean
  /** Journals the mark (then remembers it): call once the repair's record is written. */
  readonly markActed: (mark: ActedMark, now: number) => Effect.Effect<void, KubeError>
  /** The node's plan as just decided (undefined: none); written by `writer`. */
  readonly setPlan: (node: string, plan: PlanView | undefined) => void
  readonly plans: () => ReadonlyArray<PlanView>
  /** Writes the plans if any changed since the last write. */
  readonly flush: Effect.Effect<void, KubeError>
  /** Flushes every FLUSH_MS for as long as it runs; a failed write is logged and tried again. */
  readonly writer: Effect.Effect<never>
}

/** A plan's fields that a reader sees change (not the time it was last decided). */
const sameView = (a: PlanView | undefined, b: PlanView | undefined) =>
  a === b ||
  (a !== undefined && b !== undefined && JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 }))

export const makePlannedRepairStore = (
  kube: KubeShape,
  config: ControllerConfig,
  log: (msg: string, extra: Record<string, unknown>) => Effect.Effect<void>
): PlannedRepairStore => {
  let marks: ReadonlyArray<ActedMark> = []
  const plans = new Map<string, PlanView>()
  let exists = false
  const dirty = makeDirtyFlag()
  const lock = Semaphore.makeUnsafe(1)
  const write = (data: Record<string, string>) =>
    kube
      .upsertConfigMap(
        { metadata: { name: PLANNED_REPAIRS_CONFIGMAP, namespace: config.namespace }, data },
        exists
      )
      .pipe(Effect.tap(() => Effect.sync(() => (exists = true))))
  const flush = lock.withPermits(1)(
    Effect.suspend(() => {
      if (!dirty.take()) return Effect.void
      const text = serializePlans([...plans.values()].sort((a, b) => a.dueAt - b.dueAt))
      return write({ plans: text }).pipe(Effect.tapError(() => Effect.sync(dirty.set)))
    })
  )
  return {
    load: kube.readConfigMap(config.namespace, PLANNED_REPAIRS_CONFIGMAP).pipe(
      Effect.flatMap((cm) => {
        exists = true
        // The plans are decided afresh by the reconciles after the restart; the old ones are rewritten then.
        dirty.set()
        const r = parseActed(cm.data?.acted ?? serializeActed([]))
        if (Result.isSuccess(r))
          return Effect.sync(() => {
            marks = r.success
          })
        return log("unreadable planned repairs journal; its acted marks are ignored (replaced at the next)", {
          configMap: PLANNED_REPAIRS_CONFIGMAP,
          error: r.failure
        })
      }),
      Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
    ),
    acted: (id) => marks.some((m) => m.eventId === id),
    markActed: (mark, now) =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          const next = withActed(marks, mark, now)
          return write({ acted: serializeActed(next) }).pipe(
            Effect.andThen(Effect.sync(() => (marks = next)))
          )
        })
      ),
    setPlan: (node, plan) => {
      if (sameView(plans.get(node), plan)) return
      if (plan === undefined) plans.delete(node)
      else plans.set(node, plan)
      dirty.set()
    },
    plans: () => [...plans.values()],
    flush,
    writer: Effect.forever(
      dirty.whenSet.pipe(
        Effect.andThen(Effect.sleep(FLUSH_MS)),
        Effect.andThen(flush),
        Effect.catch((e) =>
          log("could not write the planned repairs journal; trying again", { error: e.message })
        )
      )
    )
  }
}
