/**
 * What the sub-reconcilers of one Node name share (Reconciler.ts runs them in order, as Karpenter's NodeClaim
 * lifecycle runs its own): the name, and what the earlier ones found for the later ones.
 */
import type { NodeView } from "../domain/NodeView.ts"
import type { RequestIntake } from "./requestedRepair.ts"

export interface NodeReconcile {
  readonly name: string
  /** The informer's view of the Node, once read (reconcileDeparted.ts). */
  node?: NodeView
  /** Its open RepairRequests, the refused ones settled (requestedRepair.ts). */
  requests?: RequestIntake
}

/** Whether the sub-reconcilers after this one run. */
export type Verdict = "Continue" | "Done"
