/**
 * Whether a node is what a repair takes it for, judged from facts the node cannot write: the cloud's view of its
 * instance, and the controller's own journal. Pure, so every refusal is tested without a cluster.
 */
import type { InstanceFacts } from "../domain/Instance.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { poolOf } from "./breaker.ts"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { NodeView } from "../domain/NodeView.ts"

/**
 * Why the cloud's facts do not back the labels the breaker and the zonal-shift gate judged the node by; undefined
 * when they do. A node may write its own labels: one that moved itself to another pool or zone would otherwise
 * escape its pool's breaker or a zone's stand-down.
 */
export const identityRefusal = (
  config: ControllerConfig,
  node: NodeView,
  facts: InstanceFacts
): string | undefined => {
  const pool = poolOf(config, node)
  if (facts.pool !== undefined && facts.pool !== pool)
    return `the node's ${config.poolLabel} label says ${pool ?? "(none)"}, its instance ${facts.instanceId} is tagged ${facts.pool}`
  const zone = node.labels[ZONE_LABEL]
  if (facts.zone !== undefined && facts.zone !== zone)
    return `the node's ${ZONE_LABEL} label says ${zone ?? "(none)"}, its instance ${facts.instanceId} is in ${facts.zone}`
  return undefined
}

/** How the live Node differs from the one the repair started on (another object under the same name). */
export const liveNodeMismatch = (r: RepairRecord, live: NodeView | undefined): string | undefined => {
  if (live === undefined) return undefined
  if (live.uid !== r.node.uid) return `uid ${r.node.uid} is now ${live.uid ?? "(none)"}`
  if ((live.providerID ?? "") !== r.node.providerID)
    return `providerID ${r.node.providerID || "(none)"} is now ${live.providerID ?? "(none)"}`
  return undefined
}
