/** Relapse sightings: a node's actionable matches checked against its pool's relapse ledgers (decide/relapse.ts). */
import { Effect, Metric } from "effect"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import { matchPolicies } from "../decide/policyMatch.ts"
import { evidenceText } from "../decide/relapse.ts"
import type { NodeView } from "../domain/NodeView.ts"
import * as M from "../observability/metrics.ts"
import { metricReason } from "../observability/seriesBounds.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

/** The ports relapse sightings use. */
export type SightingPorts = Pick<ControllerEnv, "config" | "placements" | "relapse" | "store">

/**
 * The pool whose ledgers a node's sightings count in: its repair's (the record fixed it), else its proven one
 * (owner/Placements.ts); undefined while not proven. Never its label: a node relabelled into another pool must not
 * add to that pool's relapses (docs/security.md).
 */
export const provenScope = (env: SightingPorts, node: NodeView): string | undefined => {
  const stored = env.store.get(node.name)
  if (stored._tag === "Record" && stored.record.node.uid === node.uid)
    return stored.record.node.pool ?? CLUSTER_SCOPE
  const p = env.placements.of(node)
  return p._tag === "Proven" ? (p.pool ?? CLUSTER_SCOPE) : undefined
}

/**
 * A node with actionable matches (before its decision, or when a repair of its pool ends, under repair or not): is it a relapse of a repair of its pool (a replacement, or a
 * node that came up after it, with the same condition and reason)? A relapse is counted, logged and kept in the
 * ledger; the one that crosses the threshold engages the hold. A ledger that cannot be written costs the evidence
 * of this sighting (seen again at the next reconcile), never the decision.
 */
export const sightRelapse = (env: SightingPorts, node: NodeView, now: number) =>
  Effect.gen(function* () {
    const matches = matchPolicies(env.config, node).filter((m) => m.action !== "None")
    if (matches.length === 0) return
    const scope = provenScope(env, node)
    // Not proven yet: sighted when its proof answers (Placements wakes it), never under the pool it claims.
    if (scope === undefined) return yield* env.placements.ensure(node)
    const seen = yield* env.relapse
      .sighted(node, scope, matches, now)
      .pipe(
        Effect.catch((e) =>
          Effect.logWarning("could not record a relapse", { node: node.name, error: e.message }).pipe(
            Effect.as([])
          )
        )
      )
    for (const s of seen) {
      yield* Metric.update(
        Metric.withAttributes(M.relapses, { pool: scope, reason: metricReason(env.config, s.ledger.reason) }),
        1
      )
      yield* Effect.logWarning("relapse: a repaired fault came back", {
        node: node.name,
        pool: scope,
        reason: s.ledger.reason,
        kind: s.relapse.kind,
        repair: s.relapse.repairId,
        repairedNode: s.relapse.repairedNode,
        afterMs: s.relapse.afterMs
      })
      if (s.engaged !== undefined)
        yield* Effect.logWarning("relapse hold engaged: new repairs of the reason in the pool are held", {
          pool: scope,
          reason: s.ledger.reason,
          evidence: evidenceText(s.engaged.evidence)
        })
    }
  })
