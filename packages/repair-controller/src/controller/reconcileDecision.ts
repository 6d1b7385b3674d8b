/**
 * The last sub-reconciler: looks at the node (its first sight, its proof, its scheduled-event plan, relapse
 * sightings), asks `decide` with every gate as an input, and starts the repair it allows or reports why not (an
 * Event per outcome, deduplicated; the plan and the requests' status).
 */
import { Clock, Effect, Ref } from "effect"
import { CLUSTER_SCOPE, isUnhealthy } from "../decide/breaker.ts"
import { type Decision, decide } from "../decide/decide.ts"
import { relapsePolicy, relapseSetbacks } from "../decide/relapse.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { NodeReconcile, Verdict } from "./nodeReconcile.ts"
import { markStarted, matchOf, planOf, reportDeferredToKarpenter, reportPlan } from "./plannedRepair.ts"
import { sightRelapse } from "./relapseSighting.ts"
import { nodePoolOf, type ReportPorts, reportDecision } from "./reportDecision.ts"
import { reportRequests, requestsDue } from "./requestedRepair.ts"

export type DecisionPorts<E> = ReportPorts &
  Pick<
    ControllerEnv,
    | "cache"
    | "shifts"
    | "inventory"
    | "sightings"
    | "placements"
    | "relapse"
    | "reboots"
    | "plannedRepairs"
    | "scheduled"
    | "requests"
    | "decided"
  > & {
    /** Starts the repair the decision allows (startRepair.ts); `recorded` runs once its record is journaled. */
    readonly start: (
      node: NodeView,
      d: Extract<Decision, { _tag: "Repair" }>,
      now: number,
      recorded: (record: RepairRecord) => Effect.Effect<void>
    ) => Effect.Effect<void, E>
  }

/** Relapses (within their window) and failed repairs of a pool and reason: the queue's backoff (decide/order.ts). */
const setbacksOf = (
  ports: Pick<ControllerEnv, "config" | "relapse" | "store">,
  scope: string,
  reason: string,
  now: number
): number => {
  const pool = scope === CLUSTER_SCOPE ? undefined : scope
  const relapses = relapseSetbacks(
    ports.relapse.ledger(scope, reason),
    relapsePolicy(ports.config, pool, reason),
    now
  )
  const failed = ports.store.failedIn(pool).filter((n) => {
    const r = ports.store.get(n)
    return r._tag === "Record" && r.record.reason === reason
  }).length
  return relapses + failed
}

export const reconcileDecision =
  <E>(ports: DecisionPorts<E>) =>
  (ctx: NodeReconcile): Effect.Effect<Verdict, E> =>
    Effect.gen(function* () {
      const { name, node, requests } = ctx
      if (node === undefined || requests === undefined) return "Done" as const
      ports.inventory.ensure(node)
      const now = yield* Clock.currentTimeMillis
      // Its toleration runs from the controller's own first sight, not only from what the node wrote (toleration.ts).
      const seen = ports.sightings.see(node, now)
      // An unhealthy node's pool and zone are proven as soon as it is unhealthy (not at its expiry): until then it
      // counts in no pool or zone (PoolCounter.ts). A repair planned for a scheduled event of its machine, or one a
      // person asked for, needs them too.
      const plan = planOf(ports, node, now)
      if (plan === undefined) yield* reportDeferredToKarpenter(ports, node, now)
      if (isUnhealthy(ports.config, node) || plan !== undefined || requests.match !== undefined)
        yield* ports.placements.ensure(node)
      yield* sightRelapse(ports, node, now)
      const placement = ports.placements.of(node)
      const d = decide({
        config: ports.config,
        node: seen,
        stats: ports.cache.counter.stats(),
        shifts: yield* Ref.get(ports.shifts),
        now,
        placement,
        unlocated: ports.inventory.pending(),
        ...nodePoolOf(ports, node, placement),
        ledger: ports.relapse.ledger,
        waiting: (scope) => ports.waiting.of(scope, now),
        setbacks: (scope, reason) => setbacksOf(ports, scope, reason, now),
        planned: matchOf(ports, plan),
        ...(requests.match !== undefined ? { requested: requests.match } : {}),
        reboots: ports.reboots.of
      })
      ports.decided?.(node, d, now)
      if (d._tag === "Repair") {
        // Take the pool's in-flight slot now: workers decide in parallel, and the journal write that counts a repair
        // comes only after the owner lookup. Given back when no repair was recorded (refused, deferred, retried).
        ports.cache.counter.setRepair(name, { pool: d.pool, zone: d.zone, failed: false })
        yield* requestsDue(ports, requests)
        ports.plannedRepairs.setPlan(name, undefined)
        yield* ports
          .start(node, d, now, (record) => markStarted(ports, record, plan, d.governing, now))
          .pipe(
            Effect.ensuring(
              Effect.sync(() => {
                if (ports.store.get(name)._tag !== "Record") ports.cache.counter.setRepair(name, undefined)
              })
            )
          )
        return "Done" as const
      }
      // Only a node still tolerating keeps the cloud's answer for its expiry; held back, it asks again when let go.
      if (d._tag !== "Tolerating") ports.preProofs.forget(name)
      yield* reportPlan(ports, node, plan, d, now)
      yield* reportRequests(ports, requests, d)
      yield* reportDecision(ports, node, d, placement._tag === "Proven" ? placement.pool : undefined)
      return "Done" as const
    })
