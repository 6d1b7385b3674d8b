/**
 * The second sub-reconciler: a node that is the replacement of a repair in flight wakes that repair, which waits
 * for it (its Ready, the health gate). It never stops the ones after it: the replacement is a node like any other.
 */
import { Effect } from "effect"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { NodeReconcile, Verdict } from "./nodeReconcile.ts"

export type ReplacementOfPorts = Pick<ControllerEnv, "store" | "queue">

export const reconcileReplacementOf =
  (ports: ReplacementOfPorts) =>
  (ctx: NodeReconcile): Effect.Effect<Verdict> =>
    Effect.sync(() => {
      const original = ports.store.originalOf(ctx.name)
      if (original !== undefined && original !== ctx.name) ports.queue.add(original)
      return "Continue"
    })
