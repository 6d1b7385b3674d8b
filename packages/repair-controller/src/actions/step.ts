/**
 * What a step reports: a Fact for the state machine, or "call me again in this long". Shared by every step.
 */
import type { NodeRef } from "../domain/NodeView.ts"
import type { ActionEnv } from "./ActionEnv.ts"
import { nodeRef } from "../kube/views.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { Fact } from "../repair/stateMachine.ts"

export type Outcome =
  | { readonly _tag: "Fact"; readonly fact: Fact }
  | { readonly _tag: "Wait"; readonly requeueAfterMs: number }

export const fact = (f: Fact): Outcome => ({ _tag: "Fact", fact: f })
export const wait = (ms: number): Outcome => ({ _tag: "Wait", requeueAfterMs: Math.max(0, ms) })

/** The node as the repair recorded it (controller-written journal), never as the node describes itself now. */
export const refOf = (r: RepairRecord): NodeRef =>
  nodeRef({ name: r.node.name, providerID: r.node.providerID, labels: r.node.labels })

export const nodeEvent = (
  env: ActionEnv,
  r: RepairRecord,
  type: "Normal" | "Warning",
  reason: string,
  note: string
) => env.events.emit({ node: { name: r.node.name, uid: r.node.uid }, type, reason, action: reason, note })

export const isReady = (env: ActionEnv, name: string) =>
  env.cache.get(name)?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false
