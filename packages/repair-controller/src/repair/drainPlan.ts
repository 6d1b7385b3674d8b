/**
 * Which pods a drain evicts and in what order, pure. Skipped: mirror (static) pods, DaemonSet pods, pods
 * that tolerate the repair taint, finished pods, and pods stuck terminating for over a minute. Tiers: non-critical
 * pods first, `system-cluster-critical` / `system-node-critical` last; a tier starts once the previous is empty.
 */
import { REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "@nodemend/reason-codes"
import type { PodView, TolerationView } from "../domain/PodView.ts"

const CRITICAL = new Set(["system-cluster-critical", "system-node-critical"])
const STUCK_TERMINATING_MS = 60_000

/** Same semantics as the scheduler: operator Exists with empty key tolerates everything. */
export const toleratesRepairTaint = (tolerations: ReadonlyArray<TolerationView>): boolean =>
  tolerations.some((t) => {
    if (t.effect !== undefined && t.effect !== "" && t.effect !== REPAIR_TAINT_EFFECT) return false
    if (t.operator === "Exists") return t.key === undefined || t.key === "" || t.key === REPAIR_TAINT_KEY
    return t.key === REPAIR_TAINT_KEY && (t.value ?? "") === ""
  })

export type PodClass = "skip" | "gone" | "terminating" | "tier1" | "tier2"

export const classifyPod = (p: PodView, now: number): PodClass => {
  if (p.phase === "Succeeded" || p.phase === "Failed") return "gone"
  if (p.mirror || p.ownerKinds.includes("DaemonSet") || p.ownerKinds.includes("Node")) return "skip"
  if (toleratesRepairTaint(p.tolerations)) return "skip"
  if (p.deletingSince !== undefined)
    return now - p.deletingSince > STUCK_TERMINATING_MS ? "gone" : "terminating"
  return p.priorityClassName !== undefined && CRITICAL.has(p.priorityClassName) ? "tier2" : "tier1"
}

export interface DrainPlan {
  /** Pods to evict now (the current tier). */
  readonly evict: ReadonlyArray<PodView>
  /** Every pod still in the way (both tiers plus the ones terminating). */
  readonly remaining: ReadonlyArray<PodView>
  readonly tier: 1 | 2 | undefined
}

export const drainPlan = (pods: ReadonlyArray<PodView>, now: number): DrainPlan => {
  const tier1: PodView[] = []
  const tier2: PodView[] = []
  const terminating: PodView[] = []
  for (const p of pods) {
    const c = classifyPod(p, now)
    if (c === "tier1") tier1.push(p)
    else if (c === "tier2") tier2.push(p)
    else if (c === "terminating") terminating.push(p)
  }
  const remaining = [...tier1, ...tier2, ...terminating]
  // Terminating tier-1 pods still hold tier 2 back: critical pods leave only after everything else is gone.
  const tier1Busy =
    tier1.length > 0 ||
    terminating.some((p) => p.priorityClassName === undefined || !CRITICAL.has(p.priorityClassName))
  if (tier1.length > 0) return { evict: tier1, remaining, tier: 1 }
  if (!tier1Busy && tier2.length > 0) return { evict: tier2, remaining, tier: 2 }
  return { evict: [], remaining, tier: remaining.length > 0 ? (tier1Busy ? 1 : 2) : undefined }
}
