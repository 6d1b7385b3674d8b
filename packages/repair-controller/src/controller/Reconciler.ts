/**
 * One reconcile of one Node name, as Karpenter's NodeClaim lifecycle does it: an ordered list of sub-reconcilers,
 * one file each, each built with only the ports it uses, run in turn until one says it is done.
 *
 * 1. reconcileJournaled: a repair in the journal is carried on (or, failed, kept for an operator);
 * 2. reconcileReplacementOf: a replacement wakes the repair it replaces;
 * 3. reconcileDeparted: the Node is read, its requests taken; a Node gone is forgotten;
 * 4. reconcileDecision: decide with every gate, then start the repair or report why not.
 */
import { Effect } from "effect"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { NodeReconcile } from "./nodeReconcile.ts"
import { reconcileDecision } from "./reconcileDecision.ts"
import { reconcileDeparted } from "./reconcileDeparted.ts"
import { reconcileJournaled } from "./reconcileJournaled.ts"
import { reconcileReplacementOf } from "./reconcileReplacementOf.ts"
import { intakeRequests, requestsFollow } from "./requestedRepair.ts"
import { RUN_REPAIR_PORTS } from "./repairPorts.ts"
import { runRepair } from "./runRepair.ts"
import { START_REPAIR_PORTS, startRepair } from "./startRepair.ts"

/** Only the named ports of the controller's environment: what a sub-reconciler holds. */
const pick = <K extends keyof ControllerEnv>(
  env: ControllerEnv,
  ...keys: ReadonlyArray<K>
): Pick<ControllerEnv, K> => Object.fromEntries(keys.map((k) => [k, env[k]])) as Pick<ControllerEnv, K>

/** The sub-reconcilers in order, each given its ports. */
export const makeReconciler = (env: ControllerEnv) => {
  const repairPorts = pick(env, ...RUN_REPAIR_PORTS)
  const startPorts = pick(env, ...START_REPAIR_PORTS)
  const steps = [
    reconcileJournaled({
      ...pick(env, "store", "events", "cache", "queue"),
      resume: (record) =>
        requestsFollow(repairPorts, record.node.name).pipe(Effect.andThen(runRepair(repairPorts, record)))
    }),
    reconcileReplacementOf(pick(env, "store", "queue")),
    reconcileDeparted({
      ...pick(
        env,
        "cache",
        "blocked",
        "waiting",
        "plannedRepairs",
        "placements",
        "sightings",
        "inventory",
        "preProofs"
      ),
      intake: (name, node) => intakeRequests(repairPorts, name, node)
    }),
    reconcileDecision({
      ...pick(
        env,
        "config",
        "events",
        "queue",
        "preProofs",
        "store",
        "blocked",
        "waiting",
        "owners",
        "cache",
        "shifts",
        "inventory",
        "sightings",
        "placements",
        "relapse",
        "reboots",
        "plannedRepairs",
        "scheduled",
        "requests",
        "decided"
      ),
      start: (node, d, now, recorded) => startRepair(startPorts, node, d, now, recorded)
    })
  ]
  return (name: string) =>
    Effect.gen(function* () {
      const ctx: NodeReconcile = { name }
      for (const step of steps) if ((yield* step(ctx)) === "Done") return
    })
}
