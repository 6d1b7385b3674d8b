/**
 * A replacement failed the health gate (actions/replacementGate.ts, issue #41): it is no capacity. The repair's node
 * says which check failed (`ReplacementUnhealthy`), the failure is a relapse of the repair in its pool and reason's
 * ledger, the owner gets back what the repair held on it, and the failed node is decided like any other node: its
 * own repair, under the same policies.
 */
import { Clock, Effect, Metric } from "effect"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import { evidenceText } from "../decide/relapse.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import * as M from "../observability/metrics.ts"
import { metricReason } from "../observability/seriesBounds.ts"
import type { Fact } from "../repair/stateMachine.ts"
import type { RunRepairPorts } from "./repairPorts.ts"

type Unhealthy = Extract<Fact, { _tag: "ReplacementUnhealthy" }>

const relapseOfRepair = (env: RunRepairPorts, before: RepairRecord, node: string) =>
  Effect.gen(function* () {
    const seen = yield* env.relapse.replacementFailed(before, node, yield* Clock.currentTimeMillis).pipe(
      Effect.catch((e) =>
        Effect.logWarning("could not record the failed replacement as a relapse", {
          node,
          error: e.message
        }).pipe(Effect.as(undefined))
      )
    )
    if (seen === undefined) return
    const pool = before.node.pool ?? CLUSTER_SCOPE
    yield* Metric.update(
      Metric.withAttributes(M.relapses, { pool, reason: metricReason(env.config, seen.ledger.reason) }),
      1
    )
    if (seen.engaged !== undefined)
      yield* Effect.logWarning("relapse hold engaged: new repairs of the reason in the pool are held", {
        pool,
        reason: seen.ledger.reason,
        evidence: evidenceText(seen.engaged.evidence)
      })
  })

/** `before`: the record the replacement failed in; `after`: with the failure folded in. */
export const unhealthyReplacement = (
  env: RunRepairPorts,
  before: RepairRecord,
  after: RepairRecord,
  f: Unhealthy
) =>
  Effect.gen(function* () {
    const failed = after.failedReplacements?.at(-1)
    const name = failed?.nodeName ?? failed?.instanceId ?? failed?.nodeClaim ?? "?"
    const used = after.failedReplacements?.length ?? 0
    const then =
      after.phase === "Failed"
        ? `no more replacements (replacement.maxAttempts ${f.attemptsAllowed}): the repair fails, the node is kept`
        : `launching another (${used} of ${f.attemptsAllowed} attempts failed); no pod moves until one is healthy`
    yield* env.events.emit({
      node: { name: before.node.name, uid: before.node.uid },
      type: "Warning",
      reason: "ReplacementUnhealthy",
      action: "Replace",
      note: `replacement ${name} is not capacity: ${f.check}: ${f.why}; ${then}`.slice(0, 1000)
    })
    yield* Metric.update(Metric.withAttributes(M.replacementsUnhealthy, { check: f.check }), 1)
    yield* Effect.logWarning("replacement failed the health gate", {
      node: before.node.name,
      id: before.id,
      replacement: name,
      check: f.check,
      why: f.why
    })
    // What the repair held on it (Karpenter's do-not-disrupt) is the owner's again: it is ordinary, broken capacity.
    yield* env.owners
      .of(before)
      .release(before)
      .pipe(
        Effect.catch((e) =>
          Effect.logWarning("could not release the failed replacement", { node: name, error: e })
        )
      )
    if (failed?.nodeName === undefined) return
    yield* relapseOfRepair(env, before, failed.nodeName)
    // Its own repair: decided now like any node (a replacement is never vetoed or skipped for being one).
    env.queue.add(failed.nodeName)
  })
