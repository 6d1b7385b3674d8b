// The reconcile's side of planned repairs (controller/plannedRepair.ts): the maintenance window is the proven
// pool's, never the one a node's own label names (contract 8), and with Karpenter's interruption queue set up a
// Karpenter node's scheduled events are left to Karpenter, said in one RepairDeferred Event per event.
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { planOf, reportDeferredToKarpenter, reportPlan } from "../src/controller/plannedRepair.ts"
import type { Decision } from "../src/decide/decide.ts"
import { plannedMatch } from "../src/decide/scheduledEvents.ts"
import type { PlanView } from "../src/domain/PlannedRepairs.ts"
import type { ScheduledEvent } from "../src/domain/Instance.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { Placement } from "../src/domain/Placement.ts"
import type { KarpenterCache } from "../src/karpenter/KarpenterCache.ts"
import { karpenterPools } from "../src/owner/poolOwner.ts"

const HOUR = 3_600_000
// Monday 2026-12-07 00:00 UTC; the retirement is due from Wednesday 12:00.
const NOW = Date.UTC(2026, 11, 7, 0, 0, 0)
const EVENT: ScheduledEvent = {
  id: "instance-event-0abc",
  code: "instance-retirement",
  description: "The instance is running on degraded hardware",
  notBefore: NOW + 60 * HOUR
}

const configOf = (karpenterInterruptionQueue = false) =>
  Result.getOrThrow(
    decodeConfig({
      poolLabel: "karpenter.sh/nodepool",
      scheduledEvents: {
        leadSeconds: 7200,
        maintenanceWindows: { gpu: { schedule: "0 2 * * *", duration: "4h" } },
        karpenterInterruptionQueue
      }
    })
  )

const node = (labelPool: string): NodeView => ({
  name: "ip-10-0-0-1.ec2.internal",
  uid: "u1",
  providerID: "aws:///us-west-2a/i-0123456789abcdef0",
  labels: { "karpenter.sh/nodepool": labelPool },
  annotations: {},
  conditions: [],
  deleting: false
})

const envOf = (opts: { proven?: Placement; karpenterNode?: boolean; queue?: boolean }) => {
  const emitted: string[] = []
  const env = {
    config: configOf(opts.queue),
    scheduled: { of: () => [EVENT] },
    plannedRepairs: { acted: () => false, setPlan: () => undefined },
    placements: { of: () => opts.proven ?? { _tag: "Pending" } },
    inventory: { of: () => ({ _tag: "Pending" }) },
    owners: {
      pools: karpenterPools({
        claimOf: () =>
          opts.karpenterNode === true ? { status: { nodeName: "ip-10-0-0-1.ec2.internal" } } : undefined
      } as unknown as KarpenterCache)
    },
    events: {
      emitDeduped: (key: string, _ms: number, e: { readonly note: string }) =>
        Effect.sync(() => void emitted.push(`${key}: ${e.note}`))
    }
  } as unknown as ControllerEnv
  return { env, emitted }
}

describe("planned repairs: whose window, whose events", () => {
  it("takes the maintenance window of the proven pool, not of the pool a node's label names", () => {
    const deadline = EVENT.notBefore - 2 * HOUR
    // Labelled gpu (a window at 02:00), proven general (none): due at the deadline.
    const labelledIn = planOf(
      envOf({ proven: { _tag: "Proven", pool: "general", zone: "us-west-2a" } }).env,
      node("gpu"),
      NOW
    )
    expect(labelledIn?.dueAt).toBe(deadline)
    expect(labelledIn?.window._tag).toBe("NoWindow")
    // Proven gpu, labelled general: the last 02:00 window before the deadline (Wednesday 02:00).
    const provenIn = planOf(
      envOf({ proven: { _tag: "Proven", pool: "gpu", zone: "us-west-2a" } }).env,
      node("general"),
      NOW
    )
    expect(provenIn?.window._tag).toBe("Inside")
    expect(provenIn?.dueAt).toBe(Date.UTC(2026, 11, 9, 2, 0, 0))
    // Not proven yet: no window.
    expect(planOf(envOf({}).env, node("gpu"), NOW)?.window._tag).toBe("NoWindow")
  })

  it("leaves a Karpenter node's events to Karpenter's interruption queue, once said; plans them without it", async () => {
    const deferred = envOf({ karpenterNode: true, queue: true })
    expect(planOf(deferred.env, node("gpu"), NOW)).toBeUndefined()
    await Effect.runPromise(reportDeferredToKarpenter(deferred.env, node("gpu"), NOW))
    expect(deferred.emitted).toHaveLength(1)
    expect(deferred.emitted[0]).toMatch(/instance-retirement \(instance-event-0abc, .*interruption queue/)
    // Without the queue, or not Karpenter's: planned, and nothing said of Karpenter.
    for (const o of [{ karpenterNode: true }, { queue: true }]) {
      const e = envOf(o)
      expect(planOf(e.env, node("gpu"), NOW)?.reason).toBe("EC2InstanceRetirementScheduled")
      await Effect.runPromise(reportDeferredToKarpenter(e.env, node("gpu"), NOW))
      expect(e.emitted).toEqual([])
    }
  })
})

describe("planned repairs: the plan as status and timeline read it (the journal's plans)", () => {
  const withPlans = () => {
    const { env, emitted } = envOf({ proven: { _tag: "Proven", pool: "general", zone: "us-west-2a" } })
    const plans = new Map<string, PlanView | undefined>()
    const e = {
      ...env,
      plannedRepairs: { acted: () => false, setPlan: (n: string, p: PlanView | undefined) => plans.set(n, p) }
    } as unknown as ControllerEnv
    return { env: e, plans, emitted }
  }

  it("a plan waiting for its due time, then due and held by the budget: what holds it and what lifts it", async () => {
    const { env, plans } = withPlans()
    const n = node("general")
    const plan = planOf(env, n, NOW)!
    const governing = plannedMatch(env.config, plan)
    const waiting: Decision = { _tag: "Tolerating", governing, requeueAfterMs: plan.dueAt - NOW }
    await Effect.runPromise(reportPlan(env, n, plan, waiting, NOW))
    expect(plans.get(n.name)).toMatchObject({
      eventId: EVENT.id,
      code: "instance-retirement",
      action: "Replace",
      notBefore: EVENT.notBefore,
      dueAt: EVENT.notBefore - 2 * HOUR,
      state: "waiting"
    })
    expect(plans.get(n.name)?.heldBy).toBeUndefined()
    const queued = {
      _tag: "Queued",
      governing,
      scope: "general",
      inFlight: 1,
      failed: 0,
      budget: { allowed: 1, source: 'maxInFlight "1"' },
      requeueAfterMs: 1000
    } as unknown as Decision
    await Effect.runPromise(reportPlan(env, n, plan, queued, plan.dueAt + 1))
    expect(plans.get(n.name)).toMatchObject({
      state: "held",
      heldBy: 'budget: 1 in flight, allowed 1 by maxInFlight "1"; starts when a slot frees'
    })
  })

  it("no plan, or another fault governing the node: no plan shown", async () => {
    const { env, plans } = withPlans()
    const n = node("general")
    const plan = planOf(env, n, NOW)!
    const other = { ...plannedMatch(env.config, plan), conditionType: "KernelReady" }
    await Effect.runPromise(
      reportPlan(env, n, plan, { _tag: "Tolerating", governing: other, requeueAfterMs: 1 }, NOW)
    )
    expect(plans.has(n.name) && plans.get(n.name) === undefined).toBe(true)
    await Effect.runPromise(reportPlan(env, n, undefined, { _tag: "Healthy" } as Decision, NOW))
    expect(plans.get(n.name)).toBeUndefined()
  })
})
