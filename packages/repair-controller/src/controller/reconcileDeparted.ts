/**
 * The third sub-reconciler: reads the Node from the informer, lets go of what the last decision held it by (the
 * breaker's wake-up list, its place in its pool's queue: the decision below puts it back if it still applies) and
 * takes its open RepairRequests. A Node gone or being deleted is forgotten (its plan, proof, first sight, inventory
 * entry and the cloud's early answer) and nothing after this runs.
 */
import { Effect } from "effect"
import type { NodeView } from "../domain/NodeView.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { NodeReconcile, Verdict } from "./nodeReconcile.ts"
import type { RequestIntake } from "./requestedRepair.ts"

export type DepartedPorts<E> = Pick<
  ControllerEnv,
  "cache" | "blocked" | "waiting" | "plannedRepairs" | "placements" | "sightings" | "inventory" | "preProofs"
> & {
  /** The node's open requests, the refused ones settled (requestedRepair.ts `intakeRequests`). */
  readonly intake: (name: string, node: NodeView | undefined) => Effect.Effect<RequestIntake, E>
}

export const reconcileDeparted =
  <E>(ports: DepartedPorts<E>) =>
  (ctx: NodeReconcile): Effect.Effect<Verdict, E> =>
    Effect.gen(function* () {
      const { name } = ctx
      const node = ports.cache.view(name)
      ports.blocked.unblock(name)
      ports.waiting.remove(name)
      ctx.requests = yield* ports.intake(name, node)
      if (node === undefined || node.deleting) {
        ports.plannedRepairs.setPlan(name, undefined)
        ports.placements.forget(name)
        ports.sightings.forget(name)
        ports.inventory.forget(name)
        ports.preProofs.forget(name)
        return "Done"
      }
      ctx.node = node
      return "Continue"
    })
