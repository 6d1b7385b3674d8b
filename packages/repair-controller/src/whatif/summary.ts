/**
 * The replay's result per pool and reason, side by side for two policy sets, and as JSON (`whatif -o json`).
 * Pure.
 */
import { isoTime } from "./history.ts"
import type { Relapse } from "../domain/RelapseLedger.ts"
import type { WhatIfResult } from "./result.ts"

export interface PoolReasonRow {
  readonly pool: string
  readonly reason: string
  readonly repairs: number
  /** Of `repairs`, dry-run ones (WouldRepair: no slot taken). */
  readonly wouldRepair: number
  readonly firstRepair: number | undefined
  readonly lastRepair: number | undefined
  /** Hold episodes by cause (`breaker`, `budget`, `veto`, `relapse`, ...). */
  readonly held: Readonly<Record<string, number>>
  /** Distinct nodes held at least once. */
  readonly heldNodes: number
  readonly flapsBeforeToleration: number
  readonly flapsAfterToleration: number
  readonly recoveredAfterRepair: number
  /** Relapses seen (a repaired fault back on a replacement, a fresh node or the rebooted node). */
  readonly relapses: number
  /** Relapse holds the pool and reason came under. */
  readonly relapseHolds: number
}

const key = (pool: string, reason: string) => `${pool}\u0000${reason}`

/** One row per pool and reason that saw a repair, a hold, a flap or a relapse; sorted by pool, then reason. */
export const summarize = (r: WhatIfResult): ReadonlyArray<PoolReasonRow> => {
  interface Acc {
    pool: string
    reason: string
    repairs: number
    wouldRepair: number
    firstRepair: number | undefined
    lastRepair: number | undefined
    held: Record<string, number>
    heldNodes: Set<string>
    before: number
    after: number
    afterRepair: number
    relapses: number
    relapseHolds: number
  }
  const rows = new Map<string, Acc>()
  const row = (pool: string, reason: string): Acc => {
    const k = key(pool, reason)
    const found = rows.get(k)
    if (found !== undefined) return found
    const a: Acc = {
      pool,
      reason,
      repairs: 0,
      wouldRepair: 0,
      firstRepair: undefined,
      lastRepair: undefined,
      held: {},
      heldNodes: new Set(),
      before: 0,
      after: 0,
      afterRepair: 0,
      relapses: 0,
      relapseHolds: 0
    }
    rows.set(k, a)
    return a
  }
  for (const x of r.repairs) {
    const a = row(x.pool, x.reason)
    a.repairs++
    if (x.dryRun) a.wouldRepair++
    a.firstRepair = Math.min(a.firstRepair ?? x.startedAt, x.startedAt)
    a.lastRepair = Math.max(a.lastRepair ?? x.startedAt, x.startedAt)
  }
  for (const h of r.holds) {
    const a = row(h.pool, h.reason)
    a.held[h.cause] = (a.held[h.cause] ?? 0) + 1
    a.heldNodes.add(h.node)
  }
  for (const f of r.flaps) {
    const a = row(f.pool, f.reason)
    if (f.kind === "beforeToleration") a.before++
    else if (f.kind === "afterToleration") a.after++
    else a.afterRepair++
  }
  for (const x of r.relapses) row(x.pool, x.reason).relapses++
  for (const h of r.relapseHolds) row(h.pool, h.reason).relapseHolds++
  return [...rows.values()]
    .sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : a.reason < b.reason ? -1 : 1))
    .map((a) => ({
      pool: a.pool,
      reason: a.reason,
      repairs: a.repairs,
      wouldRepair: a.wouldRepair,
      firstRepair: a.firstRepair,
      lastRepair: a.lastRepair,
      held: a.held,
      heldNodes: a.heldNodes.size,
      flapsBeforeToleration: a.before,
      flapsAfterToleration: a.after,
      recoveredAfterRepair: a.afterRepair,
      relapses: a.relapses,
      relapseHolds: a.relapseHolds
    }))
}

export interface CompareRow {
  readonly pool: string
  readonly reason: string
  readonly a: PoolReasonRow | undefined
  readonly b: PoolReasonRow | undefined
  /** Nodes repaired under one policy set and not under the other. */
  readonly onlyA: ReadonlyArray<string>
  readonly onlyB: ReadonlyArray<string>
}

/** Two replays of the same history side by side, per pool and reason. */
export const compare = (a: WhatIfResult, b: WhatIfResult): ReadonlyArray<CompareRow> => {
  const sa = new Map(summarize(a).map((r) => [key(r.pool, r.reason), r]))
  const sb = new Map(summarize(b).map((r) => [key(r.pool, r.reason), r]))
  const repaired = (r: WhatIfResult, k: string) =>
    new Set(r.repairs.filter((x) => key(x.pool, x.reason) === k).map((x) => x.node))
  return [...new Set([...sa.keys(), ...sb.keys()])].sort().map((k) => {
    const [pool, reason] = k.split("\u0000") as [string, string]
    const ra = repaired(a, k)
    const rb = repaired(b, k)
    return {
      pool,
      reason,
      a: sa.get(k),
      b: sb.get(k),
      onlyA: [...ra].filter((n) => !rb.has(n)).sort(),
      onlyB: [...rb].filter((n) => !ra.has(n)).sort()
    }
  })
}

const t = (ms: number | undefined) => (ms === undefined ? null : isoTime(ms))

const relapseJson = <R extends Relapse>(x: R) => ({
  ...x,
  at: isoTime(x.at),
  afterSeconds: Math.round(x.afterMs / 1000)
})

/** `whatif -o json`: the result with times in RFC 3339 and the per pool and reason summary. */
export const resultJson = (r: WhatIfResult) => ({
  window: { from: isoTime(r.from), to: isoTime(r.to) },
  nodes: r.nodes,
  events: r.events,
  ignoredAfterReplacement: r.ignored,
  summary: summarize(r).map((s) => ({ ...s, firstRepair: t(s.firstRepair), lastRepair: t(s.lastRepair) })),
  repairs: r.repairs.map((x) => ({
    ...x,
    dueAt: t(x.dueAt),
    startedAt: isoTime(x.startedAt),
    endsAt: isoTime(x.endsAt),
    zone: x.zone ?? null,
    ...(x.escalation !== undefined
      ? {
          escalation: {
            rebootRepair: x.escalation.rebooted.repairId,
            rebootedFor: x.escalation.rebooted.reason,
            rebootedAt: isoTime(x.escalation.rebooted.at),
            cameBackAt: isoTime(x.escalation.cameBackAt),
            afterSeconds: Math.round(x.escalation.afterMs / 1000),
            windowSeconds: Math.round(x.escalation.windowMs / 1000)
          }
        }
      : {})
  })),
  holds: r.holds.map((h) => ({
    ...h,
    from: isoTime(h.from),
    to: isoTime(h.to),
    ...(h.evidence !== undefined ? { evidence: h.evidence.map(relapseJson) } : {})
  })),
  relapseHolds: r.relapseHolds.map((h) => ({
    ...h,
    from: isoTime(h.from),
    to: isoTime(h.to),
    windowSeconds: Math.round(h.windowMs / 1000),
    evidence: h.evidence.map(relapseJson)
  })),
  relapses: r.relapses.map(relapseJson),
  flaps: r.flaps.map((f) => ({
    ...f,
    from: isoTime(f.from),
    to: isoTime(f.to),
    durationSeconds: Math.round((f.to - f.from) / 1000),
    tolerationSeconds: Math.round(f.tolerationMs / 1000)
  }))
})
