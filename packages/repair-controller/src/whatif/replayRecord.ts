/**
 * What the what-if replay reports, recorded from what the controller did in it: every decision as `decide` made it
 * (the holds, and dry-run's WouldRepair), the repair journal it wrote (a repair starts when its record is written
 * and ends when its record is deleted, Succeeded or Failed), the relapse ledgers it wrote (relapses and the holds
 * they engaged), and the recording itself (flaps: an unhealthy episode that ended by itself). Reporting only: it
 * decides nothing and tells the controller nothing.
 */
import { Result } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE, poolOf } from "../decide/breaker.ts"
import type { Decision } from "../decide/decide.ts"
import type { Escalation } from "../decide/escalation.ts"
import { matchPolicies, type PolicyMatch } from "../decide/policyMatch.ts"
import type { ConditionView, NodeView } from "../domain/NodeView.ts"
import { parseLedger, RELAPSE_LEDGER_LABEL, type Relapse } from "../domain/RelapseLedger.ts"
import { isTerminal, parseRecord, type RepairRecord } from "../domain/RepairRecord.ts"
import type { Obj } from "./memoryApiServer.ts"
import {
  type HoldOutcome,
  holdOf,
  type WhatIfFlap,
  type WhatIfHold,
  type WhatIfRelapseHold,
  type WhatIfRepair
} from "./result.ts"

const reasonOf = (m: { readonly reason: string; readonly conditionType: string; readonly status: string }) =>
  m.reason !== "" ? m.reason : `${m.conditionType}=${m.status}`

const governingOf = (d: Decision): PolicyMatch | undefined =>
  "governing" in d ? (d as { readonly governing: PolicyMatch }).governing : undefined

interface OpenHold {
  readonly cause: string
  readonly detail: string
  readonly evidence?: ReadonlyArray<Relapse>
  readonly from: number
  readonly m: PolicyMatch
  readonly scope: string
}

export const makeReplayRecord = (config: ControllerConfig) => {
  const repairs: WhatIfRepair[] = []
  /** The open repair of each node (its index in `repairs`), by record id. */
  const openRepairs = new Map<string, { readonly index: number; readonly node: string }>()
  const started = new Set<string>()
  /** Each node's last Repair decision (its match and escalation), for the record it writes next. */
  const starting = new Map<string, { readonly m: PolicyMatch; readonly escalation: Escalation | undefined }>()
  const holds: WhatIfHold[] = []
  const openHolds = new Map<string, OpenHold>()
  const wouldRepair = new Set<string>()
  const flaps: WhatIfFlap[] = []
  /** The replay's last repair of each node: a recovery the recording shows later is reported (`afterRepair`). */
  const repaired = new Map<
    string,
    { conditionType: string; reason: string; tolerationMs: number; at: number; seen: boolean }
  >()
  const relapses: Array<Relapse & { readonly pool: string; readonly reason: string }> = []
  const relapseSeen = new Set<string>()
  const relapseHolds: WhatIfRelapseHold[] = []
  const openRelapseHolds = new Map<string, Omit<WhatIfRelapseHold, "to" | "outcome">>()

  const closeHold = (node: string, at: number, outcome: HoldOutcome) => {
    const h = openHolds.get(node)
    if (h === undefined) return
    openHolds.delete(node)
    holds.push({
      node,
      pool: h.scope,
      conditionType: h.m.conditionType,
      reason: reasonOf(h.m),
      cause: h.cause,
      detail: h.detail,
      from: h.from,
      to: at,
      outcome,
      ...(h.evidence !== undefined ? { evidence: h.evidence } : {})
    })
  }

  /** Every decision, as the controller made it (ControllerEnv.decided). */
  const decided = (node: NodeView, d: Decision, at: number) => {
    const scope = poolOf(config, node) ?? CLUSTER_SCOPE
    if (d._tag === "Repair") {
      closeHold(node.name, at, "started")
      starting.set(node.name, { m: d.governing, escalation: d.escalation })
      return
    }
    if (d._tag === "WouldRepair") {
      closeHold(node.name, at, "started")
      const key = `${node.name}/${d.governing.conditionType}@${d.governing.lastTransitionTime ?? ""}`
      if (wouldRepair.has(key)) return
      wouldRepair.add(key)
      repairs.push({
        node: node.name,
        pool: scope,
        zone: node.labels["topology.kubernetes.io/zone"],
        conditionType: d.governing.conditionType,
        reason: reasonOf(d.governing),
        action: d.governing.action,
        dueAt: d.governing.expiresAt,
        startedAt: at,
        endsAt: at,
        dryRun: true,
        ...(d.escalation !== undefined ? { escalation: d.escalation } : {})
      })
      return
    }
    // Waiting seconds for a proof or the fleet inventory's answer neither starts nor ends a hold.
    if (d._tag === "Unsettled") return
    const hold = holdOf(d)
    const m = governingOf(d)
    if (hold === undefined || m === undefined) {
      closeHold(node.name, at, "recovered")
      return
    }
    const open = openHolds.get(node.name)
    if (open !== undefined && open.cause !== hold.cause) closeHold(node.name, at, "held otherwise")
    if (!openHolds.has(node.name)) openHolds.set(node.name, { ...hold, from: at, m, scope })
  }

  const journaled = (r: RepairRecord, at: number) => {
    if (!started.has(r.id)) {
      started.add(r.id)
      const decision = starting.get(r.node.name)
      starting.delete(r.node.name)
      const escalation = decision?.escalation
      const dueAt = r.tolerationExpiredAt !== undefined ? Date.parse(r.tolerationExpiredAt) : undefined
      repairs.push({
        node: r.node.name,
        pool: r.node.pool ?? r.node.instance.pool ?? CLUSTER_SCOPE,
        zone: r.node.zone ?? r.node.instance.zone,
        conditionType: r.conditionType,
        reason: r.reason !== "" ? r.reason : `${r.conditionType}=${r.conditionStatus}`,
        action: r.action,
        dueAt,
        startedAt: Date.parse(r.startedAt),
        endsAt: at,
        dryRun: false,
        ...(escalation !== undefined ? { escalation } : {})
      })
      openRepairs.set(r.id, { index: repairs.length - 1, node: r.node.name })
      repaired.set(r.node.name, {
        conditionType: r.conditionType,
        reason: repairs[repairs.length - 1]?.reason ?? r.reason,
        tolerationMs: decision?.m.tolerationMs ?? 0,
        at: Date.parse(r.startedAt),
        seen: false
      })
    }
    if (isTerminal(r)) ended(r.id, at)
  }
  const ended = (id: string, at: number) => {
    const open = openRepairs.get(id)
    if (open === undefined) return
    openRepairs.delete(id)
    const entry = repairs[open.index]
    if (entry !== undefined) repairs[open.index] = { ...entry, endsAt: at }
  }

  const ledgerChanged = (text: string, at: number) => {
    const r = parseLedger(text)
    if (Result.isFailure(r)) return
    const l = r.success
    for (const x of l.relapses) {
      const k = `${l.pool}/${l.reason}/${x.node}/${x.repairId}`
      if (relapseSeen.has(k)) continue
      relapseSeen.add(k)
      relapses.push({ ...x, pool: l.pool, reason: l.reason })
    }
    const k = `${l.pool}/${l.reason}`
    const open = openRelapseHolds.get(k)
    if (l.hold !== undefined && open === undefined)
      openRelapseHolds.set(k, {
        pool: l.pool,
        reason: l.reason,
        from: l.hold.since,
        threshold: l.hold.threshold,
        windowMs: l.hold.windowMs,
        evidence: l.hold.evidence
      })
    if (l.hold === undefined && open !== undefined) {
      openRelapseHolds.delete(k)
      relapseHolds.push({ ...open, to: at, outcome: "lifted" })
    }
  }

  const ledgerGone = (text: string, at: number) => {
    const r = parseLedger(text)
    if (Result.isFailure(r)) return
    const k = `${r.success.pool}/${r.success.reason}`
    const open = openRelapseHolds.get(k)
    if (open === undefined) return
    openRelapseHolds.delete(k)
    relapseHolds.push({ ...open, to: at, outcome: "lifted" })
  }

  /** A change the controller (or the recording) made in the replay's API server. */
  const changed = (collection: string, type: string, o: Obj, at: number) => {
    const meta = o.metadata ?? {}
    // A Node gone ends its hold; a repair of it ends when its record does (the controller's own steps).
    if (collection === "v1/nodes" && type === "DELETED") return closeHold(String(meta.name), at, "deleted")
    if (collection !== "v1/configmaps") return
    const data = (o.data ?? {}) as Record<string, string>
    const labels = (meta.labels ?? {}) as Record<string, string>
    if (data.record !== undefined) {
      const r = parseRecord(data.record)
      if (Result.isFailure(r)) return
      // A repair's record is deleted when it ends well.
      if (type === "DELETED") ended(r.success.id, at)
      else journaled(r.success, at)
    } else if (labels[RELAPSE_LEDGER_LABEL] !== "true" || data.ledger === undefined) return
    // A ledger deleted (its hold lifted after the quiet period) starts over.
    else if (type === "DELETED") ledgerGone(data.ledger, at)
    else ledgerChanged(data.ledger, at)
  }

  const view = (node: string, conditions: ReadonlyArray<ConditionView>): NodeView => ({
    name: node,
    labels: {},
    annotations: {},
    conditions: [...conditions],
    deleting: false
  })

  /** A recorded condition change of a node the replay repairs or removed: its recovery may make the repair moot. */
  const afterRepair = (node: string, scope: string, type: string, status: string, at: number) => {
    const r = repaired.get(node)
    if (r === undefined || r.seen || r.conditionType !== type) return
    if (config.policies.some((p) => p.conditionType === type && p.status === status)) return
    r.seen = true
    flaps.push({
      node,
      pool: scope,
      conditionType: type,
      reason: r.reason,
      from: r.at,
      to: at,
      tolerationMs: r.tolerationMs,
      kind: "afterRepair"
    })
  }

  /** A recorded condition change: a flap when the unhealthy episode it ends ended by itself. */
  const episode = (
    node: string,
    scope: string,
    before: ReadonlyArray<ConditionView>,
    after: ReadonlyArray<ConditionView>,
    type: string,
    at: number
  ) => {
    const was = matchPolicies(config, view(node, before)).find((m) => m.conditionType === type)
    if (was === undefined || was.lastTransitionTime === undefined) return
    if (matchPolicies(config, view(node, after)).some((m) => m.conditionType === type)) return
    flaps.push({
      node,
      pool: scope,
      conditionType: type,
      reason: reasonOf(was),
      from: was.lastTransitionTime,
      to: at,
      tolerationMs: was.tolerationMs,
      kind: at - was.lastTransitionTime < was.tolerationMs ? "beforeToleration" : "afterToleration"
    })
  }

  /** Whether a repair of `node` is in flight in the replay. */
  const underRepair = (node: string) => [...openRepairs.values()].some((o) => o.node === node)

  const result = (until: number) => {
    for (const name of [...openHolds.keys()]) closeHold(name, until, "still held")
    for (const open of openRelapseHolds.values())
      relapseHolds.push({ ...open, to: until, outcome: "still held" })
    openRelapseHolds.clear()
    return {
      repairs: [...repairs].sort((a, b) => a.startedAt - b.startedAt || (a.node < b.node ? -1 : 1)),
      holds: holds.sort((a, b) => a.from - b.from || (a.node < b.node ? -1 : 1)),
      flaps: flaps.sort((a, b) => a.from - b.from || (a.node < b.node ? -1 : 1)),
      relapseHolds: relapseHolds.sort((a, b) => a.from - b.from || (a.pool < b.pool ? -1 : 1)),
      relapses
    }
  }

  return { decided, changed, afterRepair, episode, underRepair, result }
}
