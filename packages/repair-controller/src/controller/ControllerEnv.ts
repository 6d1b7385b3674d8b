/** Everything a reconcile needs, assembled once by `Controller.ts`: the steps' ports and the controller's own. */
import type { ActionEnv } from "../actions/ActionEnv.ts"
import type { BlockedNodes } from "./BlockedNodes.ts"
import type { DrainPool } from "./DrainPool.ts"
import type { NodeCache } from "./NodeCache.ts"
import type { RepairStore } from "./RepairStore.ts"
import type { WorkQueue } from "./WorkQueue.ts"

export interface ControllerEnv extends ActionEnv {
  readonly cache: NodeCache
  readonly store: RepairStore
  readonly queue: WorkQueue
  /** Bounds the drains in flight; taints do not wait for it. */
  readonly drains: DrainPool
  /** Nodes the breaker holds back, woken when their pool's count drops. */
  readonly blocked: BlockedNodes
  /** Writes the breaker/pool gauges of the pools whose counts moved (so a scrape right after an Event agrees). */
  readonly flushPoolMetrics: () => void
}
