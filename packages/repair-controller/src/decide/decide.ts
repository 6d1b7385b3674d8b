/**
 * The decision for one node that is not under repair yet. Pure: the caller passes the clock reading, the
 * pool counts, the node's proven placement and the last zonal-shift observation. Order: toleration, veto, zonal-shift gate, zone breaker,
 * relapse hold, breaker, in-flight budget, escalation, dry-run. "When in doubt the controller does nothing."
 */
import { Clock, Effect } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { NodePoolFacts } from "../domain/NodePool.ts"
import {
  type BreakerVerdict,
  breakerVerdict,
  CLUSTER_SCOPE,
  labelPlacement,
  type PoolStats,
  type ScopeCount,
  scopeCount,
  withUnproven
} from "./breaker.ts"
import type { Placement } from "../domain/Placement.ts"
import { type Escalation, escalated, escalationOf } from "./escalation.ts"
import type { RebootMark } from "../domain/Reboots.ts"
import { type InFlightBudget, inFlightBudget } from "./inFlightBudget.ts"
import { matchPolicies, type PolicyMatch } from "./policyMatch.ts"
import { type Place, placeOf, rankOf, type Waiting } from "./order.ts"
import { type HoldVerdict, holdVerdict, type RelapsePolicy, relapsePolicy } from "./relapse.ts"
import { type TolerationVerdict, tolerationVerdict } from "./toleration.ts"
import type { RelapseLedger } from "../domain/RelapseLedger.ts"
import { type ZoneVerdict, zoneVerdict } from "./zoneBreaker.ts"
import type { Veto } from "./veto.ts"
import { vetoOf } from "./veto.ts"
import { type GateVerdict, gateVerdict, type ShiftObservation } from "./zonalShiftGate.ts"

export interface DecideInput {
  readonly config: ControllerConfig
  readonly node: NodeView
  readonly stats: PoolStats
  readonly shifts: ShiftObservation
  readonly now: number
  /**
   * Where the node counts, proven from its owner (domain/Placement.ts); the labels' claim when absent (what-if
   * replays and tests only: the controller always passes it).
   */
  readonly placement?: Placement
  /**
   * Nodes the fleet inventory has not answered for yet (owner/Inventory.ts): until it has, a pool's or zone's size
   * may be short, so a decision waits (seconds; none in what-if replays, which count by the recording).
   */
  readonly unlocated?: number
  /** The node's pool when it is a Karpenter NodePool (undefined otherwise). */
  readonly nodePool?: NodePoolFacts
  /** The relapse ledger of a pool (scope name) and reason, if one is kept (decide/relapse.ts). */
  readonly ledger?: (scope: string, reason: string) => RelapseLedger | undefined
  /** The pool's other due repairs waiting for a slot (decide/order.ts orders them with this one). */
  readonly waiting?: (scope: string) => ReadonlyArray<Waiting>
  /** Relapses and failed repairs of a pool and reason: the queue's backoff. */
  readonly setbacks?: (scope: string, reason: string) => number
  /** A repair planned for the cloud's scheduled event of the node's machine (decide/scheduledEvents.ts): one more match. */
  readonly planned?: PolicyMatch
  /** A repair a person or a workload asked for with a RepairRequest (decide/repairRequest.ts): one more match. */
  readonly requested?: PolicyMatch
  /** The node's Reboot repairs that ended well (decide/escalation.ts): a fault back soon after one escalates. */
  readonly reboots?: (node: string) => ReadonlyArray<RebootMark>
}

/** Not yet due: the toleration's own verdicts, passed through. */
type NotDue = Exclude<TolerationVerdict, { readonly _tag: "Expired" }>

export type Decision =
  | NotDue
  | { readonly _tag: "Vetoed"; readonly governing: PolicyMatch; readonly veto: Veto }
  | {
      readonly _tag: "StandDown"
      readonly governing: PolicyMatch
      readonly gate: Exclude<GateVerdict, { _tag: "Open" }>
      readonly requeueAfterMs: number
    }
  | {
      readonly _tag: "ZoneStandDown"
      readonly governing: PolicyMatch
      readonly zone: Exclude<ZoneVerdict, { _tag: "Open" }>
      readonly requeueAfterMs: number
    }
  /** The node's own placement is not proven yet, or the decision hangs on unproven nodes: asked again shortly. */
  | {
      readonly _tag: "Unsettled"
      readonly governing: PolicyMatch
      readonly why: string
      /** The pool whose proofs it waits for (woken when its counts move), when it is one pool's. */
      readonly scope?: string
      readonly requeueAfterMs: number
    }
  /** The cloud does not vouch for the node's machine: no pool, so nothing to repair it under. */
  | { readonly _tag: "Unplaced"; readonly governing: PolicyMatch; readonly why: string }
  | {
      readonly _tag: "Held"
      readonly governing: PolicyMatch
      readonly scope: string
      readonly held: Extract<HoldVerdict, { _tag: "Held" }>
      readonly policy: RelapsePolicy
      readonly requeueAfterMs: number
    }
  | {
      readonly _tag: "Blocked"
      readonly governing: PolicyMatch
      readonly breaker: BreakerVerdict
      readonly requeueAfterMs: number
    }
  | {
      readonly _tag: "Queued"
      readonly governing: PolicyMatch
      readonly scope: string
      readonly inFlight: number
      /** Of `inFlight`, failed repairs holding their slot until an operator acts. */
      readonly failed: number
      readonly budget: InFlightBudget
      /** This repair as the queue orders it, and its place: `place.position` repairs of the pool go first. */
      readonly waiting: Waiting
      readonly place: Place
      readonly requeueAfterMs: number
    }
  /** `escalation`: why `governing` is a Replace where the policy says Reboot (decide/escalation.ts). */
  | {
      readonly _tag: "WouldRepair"
      readonly governing: PolicyMatch
      readonly breaker: BreakerVerdict
      readonly escalation?: Escalation
    }
  | {
      readonly _tag: "Repair"
      readonly governing: PolicyMatch
      readonly breaker: BreakerVerdict
      readonly escalation?: Escalation
      /** The proven pool and zone the repair counts in, for good (the record keeps them). */
      readonly pool: string | undefined
      readonly zone: string | undefined
    }

/**
 * A scope's repairs in flight and the budget they are held to: what `decide` queues by, and what the pool gauges
 * (`pool_repairs_in_flight`, `pool_in_flight_budget`) show, so the two cannot differ.
 */
export const inFlightOf = (
  config: ControllerConfig,
  stats: PoolStats,
  pool: string | undefined,
  nodePool: NodePoolFacts | undefined,
  /** The clock reading (a NodePool budget's schedule is evaluated at it). */
  now: number
): { readonly count: ScopeCount; readonly budget: InFlightBudget } => {
  const count = scopeCount(stats, pool, nodePool?.claims)
  const budget = inFlightBudget({
    scope: pool ?? CLUSTER_SCOPE,
    // A node under repair and its replacement (up before the drain) are one node of the pool, not two.
    size: Math.max(0, count.size - count.repairing),
    maxInFlight: (pool !== undefined ? config.pools[pool]?.maxInFlight : undefined) ?? config.maxInFlight,
    ...(nodePool !== undefined ? { nodePoolBudgets: nodePool.budgets } : {}),
    now
  })
  return { count, budget }
}

/** How soon a decision that waits for placement proofs is made again (a proof's answer wakes the node sooner). */
export const UNSETTLED_MS = 2_000

export const decide = ({
  config,
  node,
  stats,
  shifts,
  now,
  placement,
  unlocated,
  nodePool,
  ledger,
  waiting,
  setbacks,
  reboots,
  planned,
  requested
}: DecideInput): Decision => {
  const extra = [planned, requested].filter((m) => m !== undefined)
  const t = tolerationVerdict([...matchPolicies(config, node), ...extra], now)
  if (t._tag !== "Expired") return t
  const governing = t.governing
  const veto = vetoOf(config, node) ?? (nodePool?.vetoed === true ? "nodepool-annotation" : undefined)
  if (veto !== undefined) return { _tag: "Vetoed", governing, veto }
  const gate = gateVerdict(config, shifts, node, now)
  if (gate._tag === "StandDown")
    return { _tag: "StandDown", governing, gate, requeueAfterMs: config.zonalShift.refreshSeconds * 1000 }
  const placed = placement ?? labelPlacement(config, node)
  if (placed._tag === "Unprovable") return { _tag: "Unplaced", governing, why: placed.why }
  if (placed._tag === "Pending")
    return {
      _tag: "Unsettled",
      governing,
      why: "its pool and zone are being proven",
      requeueAfterMs: UNSETTLED_MS
    }
  if (unlocated !== undefined && unlocated > 0)
    return {
      _tag: "Unsettled",
      governing,
      why: `the fleet inventory has not placed ${unlocated} nodes yet`,
      requeueAfterMs: UNSETTLED_MS
    }
  const { pool, zone: myZone } = placed
  const zone = zoneVerdict(config, stats.zones, myZone)
  // Nodes not proven yet count in the cluster only; where their labels would put them may decide otherwise
  // (open a breaker, stand a zone down, or lift another zone's stand-down): then wait for their proofs (seconds).
  const claimed = withUnproven(stats)
  if (claimed !== stats && zoneVerdict(config, claimed.zones, myZone)._tag !== zone._tag)
    return {
      _tag: "Unsettled",
      governing,
      why: "unproven nodes could change the zone breaker",
      requeueAfterMs: UNSETTLED_MS
    }
  if (zone._tag === "StandDown")
    return { _tag: "ZoneStandDown", governing, zone, requeueAfterMs: config.breaker.requeueSeconds * 1000 }
  const policy = relapsePolicy(config, pool, governing.reason)
  const held = holdVerdict(ledger?.(pool ?? CLUSTER_SCOPE, governing.reason), policy, now)
  if (held._tag === "Held")
    return {
      _tag: "Held",
      governing,
      scope: pool ?? CLUSTER_SCOPE,
      held,
      policy,
      // Looked at again when the quiet period ends, or sooner (a release wakes the pool).
      requeueAfterMs: Math.max(1000, Math.min(held.until - now, config.breaker.requeueSeconds * 1000))
    }
  const breaker = breakerVerdict(config, stats, pool, nodePool?.claims)
  if (claimed !== stats && breakerVerdict(config, claimed, pool, nodePool?.claims).open !== breaker.open)
    return {
      _tag: "Unsettled",
      governing,
      why: "unproven nodes could open the breaker",
      scope: breaker.scope,
      requeueAfterMs: UNSETTLED_MS
    }
  if (breaker.open)
    return { _tag: "Blocked", governing, breaker, requeueAfterMs: config.breaker.requeueSeconds * 1000 }
  const { count, budget } = inFlightOf(config, stats, pool, nodePool, now)
  const me: Waiting = {
    node: node.name,
    reason: governing.reason,
    rank: rankOf(governing),
    dueSince: governing.expiresAt ?? now,
    setbacks: setbacks?.(breaker.scope, governing.reason) ?? 0
  }
  const place = placeOf(me, waiting?.(breaker.scope) ?? [], now)
  // A free slot goes to the first waiting repairs of the pool in the queue's order, not to whoever asks first.
  if (count.repairing + place.position >= budget.allowed)
    return {
      _tag: "Queued",
      governing,
      scope: breaker.scope,
      inFlight: count.repairing,
      failed: count.failed,
      budget,
      waiting: me,
      place,
      // Looked at again when the scheduled budget holding it ends its window, if that is sooner.
      requeueAfterMs: Math.max(
        1,
        Math.min(config.breaker.requeueSeconds * 1000, (budget.until ?? Number.POSITIVE_INFINITY) - now)
      )
    }
  // A fault back soon after a reboot that healed it: this time the node is replaced.
  const escalation = escalationOf(config, node, governing, reboots?.(node.name) ?? [])
  const acting = escalation === undefined ? { governing } : { governing: escalated(governing), escalation }
  if (config.dryRun) return { _tag: "WouldRepair", ...acting, breaker }
  return { _tag: "Repair", ...acting, breaker, pool, zone: myZone }
}

/** `decide` at the current Clock time (TestClock in tests). */
export const decideNow = (input: Omit<DecideInput, "now">): Effect.Effect<Decision> =>
  Effect.map(Clock.currentTimeMillis, (now) => decide({ ...input, now }))
