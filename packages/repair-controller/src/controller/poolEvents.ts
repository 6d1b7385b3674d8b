/**
 * The pool-wide half of a decision that holds repairs back (breaker open, relapse hold, zone stand-down, queued
 * repairs) as an Event on the Karpenter NodePool object, where operators of Karpenter look (its own
 * NodeRepairBlocked is written on the NodePool too): one per pool and cause per `EVENT_DEDUPE_MS`, whatever the
 * number of nodes and reconciles behind it. Pools that are not NodePools (no such object) get none: their Events
 * stay on the nodes.
 */
import { Effect } from "effect"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

export const poolEvent = (
  env: Pick<ControllerEnv, "owners" | "events">,
  pool: string | undefined,
  key: string,
  type: "Normal" | "Warning",
  reason: string,
  note: string
): Effect.Effect<void> => {
  if (pool === undefined || pool === CLUSTER_SCOPE) return Effect.void
  const object = env.owners.pools.object(pool)
  if (object === undefined) return Effect.void
  return env.events.emitDeduped(`nodepool/${pool}/${object.uid}/${key}`, EVENT_DEDUPE_MS, {
    node: object,
    type,
    reason,
    action: "Decide",
    note: note.slice(0, 1000)
  })
}
