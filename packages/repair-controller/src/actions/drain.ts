/**
 * The drain: evictions through the Eviction API (PDBs respected), retried with backoff while a PDB says no.
 * At the drain deadline `force` deletes what is left and `wait` keeps evicting. Every wait is cut to the time
 * left before the deadline, so the deadline is acted on when it passes, not at the next backoff tick.
 */
import { Clock, Effect, Metric } from "effect"
import { podView } from "../kube/views.ts"
import * as M from "../observability/metrics.ts"
import { drainPlan } from "../repair/drainPlan.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import type { KubeShape } from "../kube/Kube.ts"
import { nodeEvent } from "../kube/stepPorts.ts"
import { fact, wait } from "../repair/outcome.ts"

export interface DrainPorts {
  readonly kube: Pick<KubeShape, "listPodsOnNode" | "evictPod" | "deletePod">
  readonly events: EventRecorder
}

const POLL_MS = 1000

/** A wait that ends no later than the deadline (when there is one ahead). */
export const untilDeadline = (ms: number, now: number, deadline: number | undefined): number =>
  deadline === undefined || deadline <= now ? ms : Math.min(ms, deadline - now)

const forceDelete = (
  env: DrainPorts,
  r: RepairRecord,
  pods: ReadonlyArray<{ namespace: string; name: string; uid: string }>
) =>
  Effect.gen(function* () {
    yield* Effect.forEach(
      pods,
      (p) =>
        env.kube.deletePod(p.namespace, p.name, p.uid, 0).pipe(
          Effect.tap(() =>
            Metric.update(Metric.withAttributes(M.evictions, { outcome: "force-deleted" }), 1)
          ),
          Effect.catchTag("KubeError", (e) =>
            e.code === 404 || e.code === 409 ? Effect.void : Effect.fail(e)
          )
        ),
      { concurrency: 10, discard: true }
    )
    if (r.drainDeadlinePassed === true) return wait(POLL_MS)
    yield* nodeEvent(
      env.events,
      r,
      "Warning",
      "DrainForced",
      `drain deadline passed; force-deleted ${pods.length} pods`
    )
    return fact({ _tag: "DrainDeadlinePassed" })
  })

const evict = (env: DrainPorts, r: RepairRecord, plan: ReturnType<typeof drainPlan>, now: number) =>
  Effect.gen(function* () {
    const deadline = r.drainDeadline === undefined ? undefined : Date.parse(r.drainDeadline)
    const results = yield* Effect.forEach(
      plan.evict,
      (p) =>
        env.kube.evictPod(p.namespace, p.name, p.uid).pipe(
          Effect.as("evicted" as const),
          Effect.catchTag("KubeError", (e) =>
            e.code === 429
              ? Effect.succeed("pdb-blocked" as const)
              : e.code === 404 || e.code === 409
                ? Effect.succeed("gone" as const)
                : Effect.logWarning("eviction failed", {
                    pod: `${p.namespace}/${p.name}`,
                    error: e.message
                  }).pipe(Effect.as("error" as const))
          ),
          Effect.tap((outcome) => Metric.update(Metric.withAttributes(M.evictions, { outcome }), 1)),
          Effect.map((outcome) => ({ pod: p, outcome }))
        ),
      { concurrency: 10 }
    )
    const blocked = results.filter((x) => x.outcome === "pdb-blocked" || x.outcome === "error")
    if (blocked.length === 0)
      return wait(
        untilDeadline(POLL_MS, now, deadline),
        r.evictionBlocked !== undefined ? { _tag: "EvictionsAccepted" } : undefined
      )
    yield* env.events.emitDeduped(`${r.id}/EvictionBlocked`, 60_000, {
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "EvictionBlocked",
      action: "Drain",
      note: `eviction blocked by a PodDisruptionBudget for ${blocked
        .map((b) => `${b.pod.namespace}/${b.pod.name}`)
        .slice(0, 5)
        .join(", ")}; retrying with backoff`
    })
    // The backoff is the plan's (repair/plan.ts), from the journaled rounds: a restart keeps it.
    return fact({ _tag: "EvictionBlocked" })
  })

export const drain = (env: DrainPorts, r: RepairRecord, deadlinePassed: boolean, force: boolean) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (deadlinePassed && !force && r.drainDeadlinePassed !== true) {
      yield* nodeEvent(
        env.events,
        r,
        "Warning",
        "DrainDeadlineExceeded",
        "drain deadline passed; drainMode=wait keeps evicting through PDBs"
      )
      return fact({ _tag: "DrainDeadlinePassed" })
    }
    const plan = drainPlan((yield* env.kube.listPodsOnNode(r.node.name)).map(podView), now)
    if (plan.remaining.length === 0) {
      yield* nodeEvent(env.events, r, "Normal", "Drained", "all evictable pods are gone")
      return fact({ _tag: "Drained" })
    }
    if (force) return yield* forceDelete(env, r, plan.remaining)
    return yield* evict(env, r, plan, now)
  })
