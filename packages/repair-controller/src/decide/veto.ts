/** Vetoes: the node's do-not-repair annotation, a pool the config excludes, or a global pause. */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { DO_NOT_REPAIR_ANNOTATION } from "@nodemend/reason-codes"
import type { NodeView } from "../domain/NodeView.ts"
import { poolOf } from "./breaker.ts"

export type Veto = "paused" | "node-annotation" | "pool" | "nodepool-annotation"

export const vetoOf = (config: ControllerConfig, node: NodeView): Veto | undefined => {
  if (config.paused) return "paused"
  if (node.annotations[DO_NOT_REPAIR_ANNOTATION] === "true") return "node-annotation"
  const pool = poolOf(config, node)
  if (
    pool !== undefined &&
    (config.doNotRepairPools.includes(pool) || config.pools[pool]?.doNotRepair === true)
  )
    return "pool"
  return undefined
}
