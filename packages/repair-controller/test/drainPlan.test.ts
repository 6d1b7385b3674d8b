import { describe, expect, it } from "@effect/vitest"
import type { PodView } from "../src/domain/PodView.ts"
import { drainPlan, toleratesRepairTaint } from "../src/repair/drainPlan.ts"

const NOW = 1_000_000
const pod = (name: string, over: Partial<PodView> = {}): PodView => ({
  namespace: "ns",
  name,
  uid: name,
  phase: "Running",
  ownerKinds: ["ReplicaSet"],
  mirror: false,
  tolerations: [],
  ...over
})

describe("drain plan", () => {
  it("skips mirror, DaemonSet, tolerating and finished pods", () => {
    const plan = drainPlan(
      [
        pod("mirror", { mirror: true }),
        pod("ds", { ownerKinds: ["DaemonSet"] }),
        pod("tol", { tolerations: [{ operator: "Exists" }] }),
        pod("done", { phase: "Succeeded" }),
        pod("app")
      ],
      NOW
    )
    expect(plan.evict.map((p) => p.name)).toEqual(["app"])
    expect(plan.remaining.map((p) => p.name)).toEqual(["app"])
  })

  it("critical pods go last, only once everything else is gone", () => {
    const crit = pod("crit", { priorityClassName: "system-node-critical" })
    expect(drainPlan([crit, pod("app")], NOW)).toMatchObject({ tier: 1, evict: [{ name: "app" }] })
    expect(drainPlan([crit, pod("app", { deletingSince: NOW - 1000 })], NOW).evict).toEqual([])
    expect(drainPlan([crit], NOW)).toMatchObject({ tier: 2, evict: [{ name: "crit" }] })
  })

  it("a pod terminating for over a minute counts as gone", () => {
    expect(drainPlan([pod("stuck", { deletingSince: NOW - 61_000 })], NOW).remaining).toEqual([])
    expect(drainPlan([pod("leaving", { deletingSince: NOW - 1000 })], NOW).remaining).toHaveLength(1)
  })

  it("toleration matching follows the scheduler", () => {
    expect(toleratesRepairTaint([{ operator: "Exists" }])).toBe(true)
    expect(
      toleratesRepairTaint([{ key: "nodemend.io/repair", operator: "Exists", effect: "NoSchedule" }])
    ).toBe(true)
    expect(
      toleratesRepairTaint([{ key: "nodemend.io/repair", operator: "Exists", effect: "NoExecute" }])
    ).toBe(false)
    expect(toleratesRepairTaint([{ key: "other", operator: "Exists" }])).toBe(false)
    expect(toleratesRepairTaint([{ key: "nodemend.io/repair", operator: "Equal", value: "" }])).toBe(true)
  })
})
