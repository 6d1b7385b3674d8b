/**
 * The owner port's one entry: `prove` finds and proves a node's owner (ownership.ts, the same check for every
 * owner), `of` gives the adapter that acts for a repair. This is the only place that asks which owner it is.
 */
import { Effect } from "effect"
import type { InstanceFacts } from "../domain/Instance.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { fact } from "../repair/outcome.ts"
import { autoScalingOwner } from "./autoScalingOwner.ts"
import { karpenterOwner } from "./karpenterOwner.ts"
import { kwokOwner } from "./kwokOwner.ts"
import { launchTemplateOwner } from "./launchTemplateOwner.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"
import { type Ownership, proveOwner } from "./ownership.ts"
import { karpenterPools, type PoolOwner } from "./poolOwner.ts"

export interface Owners {
  /** `vouched`: the cloud's answer for this very Node, asked shortly before the decision (PreProofs.ts). */
  readonly prove: (node: NodeView, vouched?: InstanceFacts) => Effect.Effect<Ownership>
  readonly of: (r: RepairRecord) => MachineOwner
  /** What pools' owners say about them (a Karpenter NodePool's facts, where its Events go). */
  readonly pools: PoolOwner
}

/**
 * Nobody to act through (a reboot-only repair of a node no owner claims): every capacity step ends the repair
 * instead of touching a machine nobody vouches for (fail closed). The state machine never gets here; this is
 * the guard if it did.
 */
const noOwner = (why: string): MachineOwner => {
  const aborted = () => Effect.succeed(fact({ _tag: "Aborted", why: `no owner to act through: ${why}` }))
  return {
    name: () => "nobody",
    addCapacity: aborted,
    awaitCapacity: aborted,
    removeMachine: aborted,
    awaitMachineGone: aborted,
    removeNode: aborted,
    release: () => Effect.void,
    cannotReplace: why
  }
}

export const makeOwners = (ports: OwnerPorts): Owners => {
  const karpenter = karpenterOwner(ports)
  const autoScaling = autoScalingOwner(ports)
  // Standalone machines are launched from a template by the provider in use: EC2, or kwok's Nodes.
  const standalone = ports.cloud.name === "kwok" ? kwokOwner(ports) : launchTemplateOwner(ports)
  return {
    prove: (node, vouched) => proveOwner(ports, node, vouched),
    pools: karpenterPools(ports.karpenter),
    of: (r) => {
      const owner = r.node.instance.owner
      switch (owner.kind) {
        case "karpenter":
          return karpenter
        case "autoScaling":
          return autoScaling
        case "standalone":
          return standalone
        case "unknown":
          return noOwner(owner.why)
      }
    }
  }
}
