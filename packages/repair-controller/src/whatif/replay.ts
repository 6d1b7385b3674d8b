/**
 * What-if replay: the controller's own decision (`decide/decide.ts`, and through it toleration, reason policies,
 * vetoes, the zonal-shift gate, the breaker, the in-flight budget, dry-run) and its own pool counts
 * (`controller/PoolCounter.ts`) and wake-ups (`controller/BlockedNodes.ts`), run over a recorded history on a
 * simulated clock. Nothing here decides: every verdict is `decide`'s, so a gate added to it that reads the config,
 * the node and the pool counts is replayed as it is (one that needs more input needs the replay to keep it).
 * A decision this module does not know by name is reported as a hold under its tag, and its `requeueAfterMs`
 * (when it has one) schedules the next look, as the Reconciler's requeue does.
 *
 * The simulation: a node is decided again when its recorded state changes, when its decision asks to be looked
 * at again (`requeueAfterMs`), and when its pool's counts ease (a repair ended, a node recovered), as the
 * controller's BlockedNodes wakes it. A started repair holds its pool's slot for the repair duration, then the
 * node is gone (Replace: its replacement, healthy, joins the pool when capacity first adds it, at the start, or
 * at the end otherwise) or healthy again (Reboot). What the recording says of a replaced node afterwards did not
 * happen in the replayed world and is not applied; a recovery it shows is reported (the repair may not have been
 * needed). Zonal shifts are not in a recording: the gate sees none.
 *
 * Relapse holds and the queue order are the controller's too: a relapse ledger per pool and reason
 * (`decide/relapse.ts`: a repair that ended joins it, a sighting of its condition and reason on a replacement, on a
 * node that came up after the repair started or on the rebooted node is a relapse, a held ledger whose quiet period
 * passed starts over), the waiting room of queued repairs (`controller/WaitingRoom.ts`) and the backoff of the
 * relapses that count. A reboot that ended well is remembered per node, as the controller's RebootStore does: the
 * same condition type back within the escalation window makes the node's next repair a Replace (`decide`, through
 * decide/escalation.ts; the repair's `escalation` says why). A node's arrival is its first line in the recording, and a status's first sight (where its
 * toleration starts, decide/toleration.ts) is the line that shows it. The cloud's scheduled events of a node's
 * machine (`scheduledEvent` lines) are planned by the controller's planner (decide/scheduledEvents.ts `nodePlan`)
 * and given to `decide` as its one more match; a started repair marks its event acted (planned no more), as the
 * controller's journal does. The window is the recorded pool's. Every repair ends well (failed repairs
 * are not in a recording), so the backoff counts relapses only. Pure and synchronous: no I/O, no clock.
 */
import { DO_NOT_REPAIR_ANNOTATION, ZONE_LABEL } from "@nodemend/reason-codes"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { makeBlockedNodes } from "../controller/BlockedNodes.ts"
import { makePoolCounter } from "../controller/PoolCounter.ts"
import { makeWaitingRoom } from "../controller/WaitingRoom.ts"
import { CLUSTER_SCOPE, poolOf } from "../decide/breaker.ts"
import { type Decision, decide } from "../decide/decide.ts"
import type { Escalation } from "../decide/escalation.ts"
import { matchPolicies, type PolicyMatch } from "../decide/policyMatch.ts"
import {
  keepsLedger,
  ledgerRepairOf,
  liftsByItself,
  observe,
  quietUntil,
  recordRepair,
  relapsePolicy,
  relapseSetbacks,
  released,
  sightingsOf,
  emptyLedger,
  worthObserving
} from "../decide/relapse.ts"
import { ledgerKey, type Relapse, type RelapseLedger } from "../domain/RelapseLedger.ts"
import type { ShiftObservation } from "../decide/zonalShiftGate.ts"
import type { NodePoolFacts } from "../domain/NodePool.ts"
import type { ConditionView, NodeView } from "../domain/NodeView.ts"
import type { RebootMark } from "../domain/Reboots.ts"
import type { ScheduledEvent } from "../domain/Instance.ts"
import { isPlannedMatch, nodePlan, plannedMatch } from "../decide/scheduledEvents.ts"
import { type HistoryEvent, isoTime } from "./history.ts"

/** What a replaced node's repair takes beyond its drain deadline: launch, join, terminate (documented). */
export const REPLACE_OVERHEAD_MS = 5 * 60_000

/**
 * How long a started repair holds its slot unless `--repair-duration` says: Replace, the drain deadline plus
 * REPLACE_OVERHEAD_MS (15 min with the defaults); Reboot, the drain deadline plus the reboot's settle time.
 */
export const defaultRepairDurationMs = (config: ControllerConfig, m: PolicyMatch): number =>
  m.action === "Reboot"
    ? m.drainDeadlineMs + config.reboot.settleSeconds * 1000
    : m.drainDeadlineMs + REPLACE_OVERHEAD_MS

export interface ReplayOptions {
  /** Every repair takes this long (ms); default `defaultRepairDurationMs`. */
  readonly repairDurationMs?: number
  /** Run the clock to here (epoch ms); default the recording's `end` mark, else its last event. */
  readonly until?: number
}

export interface WhatIfRepair {
  readonly node: string
  readonly pool: string
  readonly zone: string | undefined
  readonly conditionType: string
  readonly reason: string
  readonly action: string
  /** When its toleration ran out (undefined: never, as for a condition without lastTransitionTime). */
  readonly dueAt: number | undefined
  readonly startedAt: number
  readonly endsAt: number
  /** The config is dry-run: the controller would only have said WouldRepair (no slot taken). */
  readonly dryRun: boolean
  /** A Replace where the policy says Reboot: the fault came back soon after the replay's reboot of the node. */
  readonly escalation?: Escalation
}

/** How a hold ended: the repair started, the node recovered or was deleted, another gate held it, or the end. */
export type HoldOutcome = "started" | "recovered" | "deleted" | "held otherwise" | "still held"

export interface WhatIfHold {
  readonly node: string
  readonly pool: string
  readonly conditionType: string
  readonly reason: string
  /**
   * `breaker`, `budget`, `veto`, `zonal-shift`, `relapse`, or the decision's tag for a gate this replay knows no
   * name for.
   */
  readonly cause: string
  /** The figures when the hold began: `7 of 20 unhealthy, allowed 4`. */
  readonly detail: string
  readonly from: number
  readonly to: number
  readonly outcome: HoldOutcome
  /** `relapse`: the relapses holding the pool and reason when the hold began (the evidence). */
  readonly evidence?: ReadonlyArray<Relapse>
}

/** A relapse hold on a pool and reason: engaged by the relapse that crossed the threshold, lifted by quiet. */
export interface WhatIfRelapseHold {
  readonly pool: string
  readonly reason: string
  readonly from: number
  /** When it lifted (its quiet period passed), or the end of the replay. */
  readonly to: number
  readonly outcome: "lifted" | "still held"
  readonly threshold: number
  readonly windowMs: number
  /** The relapses that engaged it. */
  readonly evidence: ReadonlyArray<Relapse>
}

export type FlapKind = "beforeToleration" | "afterToleration" | "afterRepair"

export interface WhatIfFlap {
  readonly node: string
  readonly pool: string
  readonly conditionType: string
  readonly reason: string
  readonly from: number
  readonly to: number
  readonly tolerationMs: number
  /**
   * beforeToleration: recovered within its toleration (the toleration absorbed it); afterToleration: recovered by
   * itself after it, not repaired (held, vetoed or dry-run); afterRepair: the recording shows it recovering after the
   * replay had started its repair (the repair may not have been needed).
   */
  readonly kind: FlapKind
}

export interface WhatIfResult {
  readonly from: number
  readonly to: number
  readonly nodes: number
  readonly events: number
  /** Recorded events about a node after the replay had replaced it (they did not happen in the replayed world). */
  readonly ignored: number
  readonly repairs: ReadonlyArray<WhatIfRepair>
  readonly holds: ReadonlyArray<WhatIfHold>
  readonly flaps: ReadonlyArray<WhatIfFlap>
  /** Relapse holds of pools and reasons (their held nodes are in `holds` with cause `relapse`). */
  readonly relapseHolds: ReadonlyArray<WhatIfRelapseHold>
  /** Relapses seen: a repaired fault coming back (`kind`: replacement, fresh or same-node). */
  readonly relapses: ReadonlyArray<Relapse & { readonly pool: string; readonly reason: string }>
}

const NO_SHIFTS: ShiftObservation = { _tag: "Known", shifts: [] }

interface SimNode {
  readonly name: string
  pool: string | undefined
  zone: string | undefined
  doNotRepair: boolean
  /** Its first line in the recording (or its creation by the replay): the Node's creationTimestamp. */
  readonly createdAt: number
  readonly conditions: Map<string, ConditionView>
  view: NodeView
  /** The pool's name for reports: the pool, or `<cluster>`. */
  scope: string
  /** Ms of the next scheduled look (stale heap entries are skipped). */
  nextLook: number | undefined
  hold:
    | { cause: string; detail: string; evidence?: ReadonlyArray<Relapse>; from: number; m: PolicyMatch }
    | undefined
  /** A repair the replay started and has not finished (`index`: its entry in the result's repairs). */
  repair: { m: PolicyMatch; endsAt: number; index: number } | undefined
  /** Replaced in the replay: the recording's later lines are about a machine that is gone. */
  replaced: boolean
  /** The replay's last repair of it: a recovery the recording shows later is reported (`afterRepair`). */
  repaired:
    | { conditionType: string; reason: string; at: number; tolerationMs: number; seen: boolean }
    | undefined
  /** Dry-run: the episodes (condition type + transition time) already reported as WouldRepair. */
  readonly wouldRepair: Set<string>
  /** The cloud's scheduled events of its machine, by id, as last recorded. */
  readonly scheduled: Map<string, ScheduledEvent>
  /** Events a started repair was for: planned no more (the controller's acted marks). */
  readonly acted: Set<string>
}

interface Timer {
  readonly at: number
  readonly seq: number
  readonly kind: "look" | "repairEnd"
  readonly node: string
}

/** A binary min-heap of timers by (at, seq). */
const makeHeap = () => {
  const a: Timer[] = []
  const less = (x: Timer, y: Timer) => x.at < y.at || (x.at === y.at && x.seq < y.seq)
  return {
    size: () => a.length,
    peek: (): Timer | undefined => a[0],
    push: (t: Timer) => {
      a.push(t)
      let i = a.length - 1
      while (i > 0) {
        const p = (i - 1) >> 1
        if (!less(a[i]!, a[p]!)) break
        ;[a[i], a[p]] = [a[p]!, a[i]!]
        i = p
      }
    },
    pop: (): Timer | undefined => {
      const top = a[0]
      const last = a.pop()
      if (a.length > 0 && last !== undefined) {
        a[0] = last
        let i = 0
        for (;;) {
          const l = 2 * i + 1
          const r = l + 1
          let m = i
          if (l < a.length && less(a[l]!, a[m]!)) m = l
          if (r < a.length && less(a[r]!, a[m]!)) m = r
          if (m === i) break
          ;[a[i], a[m]] = [a[m]!, a[i]!]
          i = m
        }
      }
      return top
    }
  }
}

/** A decision that starts nothing and is not waiting for its toleration: why it holds, in words. */
export const holdOf = (
  d: Decision
): { cause: string; detail: string; evidence?: ReadonlyArray<Relapse> } | undefined => {
  switch (d._tag) {
    case "Healthy":
    case "ReportOnly":
    case "Tolerating":
    case "Repair":
    case "WouldRepair":
      return undefined
    case "Blocked":
      return {
        cause: "breaker",
        detail: `${d.breaker.unhealthy} of ${d.breaker.size} unhealthy, allowed ${d.breaker.allowed} (${d.breaker.percent}%)`
      }
    case "Queued":
      return {
        cause: "budget",
        detail: `${d.inFlight} in flight${d.failed > 0 ? ` (${d.failed} failed)` : ""}, allowed ${d.budget.allowed} by ${d.budget.source}`
      }
    case "Held":
      return {
        cause: "relapse",
        detail: `${d.held.relapses.length} relapses within ${Math.round(d.held.hold.windowMs / 60_000)}m of a repair (threshold ${d.held.hold.threshold}), quiet until ${isoTime(d.held.until)}`,
        evidence: d.held.relapses
      }
    case "Vetoed":
      return { cause: "veto", detail: d.veto }
    case "StandDown":
      return {
        cause: "zonal-shift",
        detail: d.gate.cause === "shift" ? `shift ${d.gate.shift.kind}` : `unknown: ${d.gate.error}`
      }
    default: {
      // A gate added to decide after this replay was written: reported under its own tag.
      const {
        _tag: tag,
        governing: _g,
        requeueAfterMs: _r,
        ...rest
      } = d as {
        readonly _tag: string
        readonly governing?: unknown
        readonly requeueAfterMs?: unknown
      }
      // Its own figures, as it gives them (JSON, shortened): this replay knows no words for them.
      const figures = JSON.stringify(rest)
      return {
        cause: tag.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase(),
        detail: `${tag}${figures === "{}" ? "" : ` ${figures.length > 240 ? `${figures.slice(0, 239)}…` : figures}`}`
      }
    }
  }
}

/** A `scheduledEvent` line as the cloud provider gives the event to the controller. */
const scheduledEventOf = (e: HistoryEvent & { readonly kind: "scheduledEvent" }): ScheduledEvent => ({
  id: e.id,
  code: e.code,
  description: e.description ?? "",
  notBefore: Date.parse(e.notBefore),
  ...(e.notAfter !== undefined ? { notAfter: Date.parse(e.notAfter) } : {}),
  ...(e.state === "completed" || e.state === "canceled" ? { ended: e.state } : {})
})

const governingOf = (d: Decision): PolicyMatch | undefined =>
  "governing" in d ? (d as { readonly governing: PolicyMatch }).governing : undefined

const requeueOf = (d: Decision): number | undefined => {
  const r = (d as { readonly requeueAfterMs?: number }).requeueAfterMs
  return typeof r === "number" && Number.isFinite(r) ? r : undefined
}

const reasonOf = (m: { readonly reason: string; readonly conditionType: string; readonly status: string }) =>
  m.reason !== "" ? m.reason : `${m.conditionType}=${m.status}`

/** Replays `events` (in time order, as `parseHistory` gives them) under `config`. */
export const replay = (
  config: ControllerConfig,
  events: ReadonlyArray<HistoryEvent>,
  options: ReplayOptions = {}
): WhatIfResult => {
  const counter = makePoolCounter(config)
  /** Queued repairs by pool, as the controller keeps them (stale after the controller's own bound). */
  const waiting = makeWaitingRoom(2 * config.breaker.requeueSeconds * 1000 + 60_000)
  /** Relapse ledgers by pool and reason (`ledgerKey`), as the controller's RelapseStore keeps them. */
  const ledgers = new Map<string, RelapseLedger>()
  const relapseHolds: WhatIfRelapseHold[] = []
  const openRelapseHolds = new Map<string, Omit<WhatIfRelapseHold, "to" | "outcome">>()
  const relapses: Array<Relapse & { readonly pool: string; readonly reason: string }> = []
  const nodes = new Map<string, SimNode>()
  /** Reboots that ended well, by node: the controller's RebootStore (escalation, decide/escalation.ts). */
  const reboots = new Map<string, RebootMark[]>()
  const heap = makeHeap()
  let seq = 0
  const woken = new Set<string>()
  const blocked = makeBlockedNodes((name) => woken.add(name))
  counter.onChange((scope, eased) => {
    if (eased) blocked.eased(scope)
  })
  const repairs: WhatIfRepair[] = []
  /** Karpenter NodePools' facts, by pool, as the recording last gave them (`decide` weighs them as live). */
  const nodePools = new Map<string, NodePoolFacts>()
  const holds: WhatIfHold[] = []
  const flaps: WhatIfFlap[] = []
  let ignored = 0

  const startMark = events.find((e) => e.kind === "mark" && e.mark === "start")?.atMs
  const first = startMark ?? events[0]?.atMs ?? options.until ?? 0
  const endMark = events.findLast((e) => e.kind === "mark" && e.mark === "end")?.atMs
  const until = options.until ?? endMark ?? events.at(-1)?.atMs ?? first

  const viewOf = (n: SimNode): NodeView => ({
    name: n.name,
    labels: {
      ...(n.pool !== undefined ? { [config.poolLabel]: n.pool } : {}),
      ...(n.zone !== undefined ? { [ZONE_LABEL]: n.zone } : {})
    },
    annotations: n.doNotRepair ? { [DO_NOT_REPAIR_ANNOTATION]: "true" } : {},
    conditions: [...n.conditions.values()],
    deleting: false,
    createdAt: n.createdAt
  })
  const refresh = (n: SimNode) => {
    n.view = viewOf(n)
    n.scope = poolOf(config, n.view) ?? CLUSTER_SCOPE
    counter.upsert(n.view)
  }
  const newNode = (
    name: string,
    pool: string | undefined,
    zone: string | undefined,
    now: number
  ): SimNode => {
    const n: SimNode = {
      name,
      pool,
      zone,
      doNotRepair: false,
      createdAt: now,
      conditions: new Map(),
      view: { name, labels: {}, annotations: {}, conditions: [], deleting: false },
      scope: CLUSTER_SCOPE,
      nextLook: undefined,
      hold: undefined,
      repair: undefined,
      replaced: false,
      repaired: undefined,
      wouldRepair: new Set(),
      scheduled: new Map(),
      acted: new Set()
    }
    nodes.set(name, n)
    refresh(n)
    return n
  }
  const schedule = (n: SimNode, at: number) => {
    // The earliest look asked for wins, as the work queue's addAfter; that look asks again if it must.
    if (n.nextLook !== undefined && n.nextLook <= at) return
    n.nextLook = at
    heap.push({ at, seq: seq++, kind: "look", node: n.name })
  }
  const closeHold = (n: SimNode, at: number, outcome: HoldOutcome) => {
    const h = n.hold
    if (h === undefined) return
    n.hold = undefined
    blocked.unblock(n.name)
    holds.push({
      node: n.name,
      pool: n.scope,
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
  const replacementName = (n: SimNode) => `${n.name}/replacement`
  const replacementOf = (n: SimNode, now: number) => {
    const r = newNode(replacementName(n), n.pool, n.zone, now)
    r.doNotRepair = false
    return r
  }

  // The config is fixed for a replay: each pool and reason's policy is worked out once (it was the replay's top cost).
  const policies = new Map<string, ReturnType<typeof relapsePolicy>>()
  const relapsePolicyOf = (scope: string, reason: string) => {
    const k = ledgerKey(scope, reason)
    let p = policies.get(k)
    if (p === undefined) {
      p = relapsePolicy(config, scope === CLUSTER_SCOPE ? undefined : scope, reason)
      policies.set(k, p)
    }
    return p
  }
  const ledgerOf = (scope: string, reason: string) => ledgers.get(ledgerKey(scope, reason))

  /** A held ledger whose quiet period has passed starts over, as the controller's recheck lifts it. */
  const liftQuiet = (now: number) => {
    for (const [k, l] of ledgers) {
      const policy = relapsePolicyOf(l.pool, l.reason)
      if (!liftsByItself(l, policy, now)) continue
      ledgers.set(k, released(l))
      const open = openRelapseHolds.get(k)
      if (open === undefined) continue
      openRelapseHolds.delete(k)
      relapseHolds.push({ ...open, to: Math.min(now, quietUntil(l, policy) ?? now), outcome: "lifted" })
    }
  }

  /** The node seen with its matches: a relapse of a repair of its pool or not (the controller's sightRelapse). */
  const sight = (n: SimNode, now: number) => {
    const matches = matchPolicies(config, n.view).filter((m) => m.action !== "None")
    for (const { match, sighting } of sightingsOf(n.view, matches)) {
      const known = ledgerOf(n.scope, match.reason)
      if (!worthObserving(known)) continue
      const o = observe(known, sighting, relapsePolicyOf(n.scope, match.reason), now)
      if (o.relapse === undefined) continue
      ledgers.set(ledgerKey(n.scope, match.reason), o.ledger)
      relapses.push({ ...o.relapse, pool: n.scope, reason: match.reason })
      if (o.engaged !== undefined)
        openRelapseHolds.set(ledgerKey(n.scope, match.reason), {
          pool: n.scope,
          reason: match.reason,
          from: now,
          threshold: o.engaged.threshold,
          windowMs: o.engaged.windowMs,
          evidence: o.engaged.evidence
        })
    }
  }

  /** A repair that ended well joins its pool and reason's ledger; the pool's unhealthy nodes are sighted again. */
  const repairedWell = (n: SimNode, m: PolicyMatch, startedAt: number, now: number) => {
    const policy = relapsePolicyOf(n.scope, m.reason)
    if (!keepsLedger(m.reason, policy) || (m.action !== "Replace" && m.action !== "Reboot")) return
    const k = ledgerKey(n.scope, m.reason)
    const ledger = ledgers.get(k) ?? emptyLedger(n.scope, m.reason, m.conditionType)
    ledgers.set(
      k,
      recordRepair(
        ledger,
        ledgerRepairOf({
          id: `${n.name}@${startedAt}`,
          node: n.name,
          action: m.action,
          escalated: false,
          replacementNode: m.action === "Replace" ? replacementName(n) : undefined,
          startedAt,
          finishedAt: now
        }),
        policy,
        now
      )
    )
    // Only unhealthy nodes can be sighted (a healthy one matches no policy): not every node of the pool, every time.
    for (const name of counter.unhealthyNames()) {
      const o = nodes.get(name)
      if (o !== undefined && o !== n && o.scope === n.scope) sight(o, now)
    }
  }

  /** The controller's reconcile of one node not under repair, at `now`. */
  const look = (n: SimNode, now: number) => {
    if (n.repair !== undefined || n.replaced || !nodes.has(n.name)) return
    const facts = n.pool !== undefined ? nodePools.get(n.pool) : undefined
    liftQuiet(now)
    sight(n, now)
    // Back in the pool's queue only if this decision queues it again.
    waiting.remove(n.name)
    const plan = nodePlan(config, [...n.scheduled.values()], (id) => n.acted.has(id), n.pool, now)
    const d = decide({
      config,
      node: n.view,
      stats: counter.stats(),
      shifts: NO_SHIFTS,
      now,
      ...(facts !== undefined ? { nodePool: facts } : {}),
      ledger: ledgerOf,
      waiting: (scope) => waiting.of(scope, now),
      setbacks: (scope, reason) =>
        relapseSetbacks(ledgerOf(scope, reason), relapsePolicyOf(scope, reason), now),
      reboots: (name) => reboots.get(name) ?? [],
      ...(plan !== undefined ? { planned: plannedMatch(config, plan) } : {})
    })
    if (d._tag === "Queued") waiting.put(d.scope, d.waiting, now)
    const m = governingOf(d)
    const requeue = requeueOf(d)
    if (requeue !== undefined) schedule(n, now + requeue)
    if (d._tag === "Repair") {
      closeHold(n, now, "started")
      if (plan !== undefined && isPlannedMatch(d.governing)) n.acted.add(plan.event.id)
      const duration = options.repairDurationMs ?? defaultRepairDurationMs(config, d.governing)
      counter.setRepair(n.name, { pool: d.pool, zone: d.zone, failed: false })
      n.repair = { m: d.governing, endsAt: now + duration, index: repairs.length }
      n.repaired = {
        conditionType: d.governing.conditionType,
        reason: reasonOf(d.governing),
        at: now,
        tolerationMs: d.governing.tolerationMs,
        seen: false
      }
      repairs.push({
        node: n.name,
        pool: n.scope,
        zone: n.zone,
        conditionType: d.governing.conditionType,
        reason: reasonOf(d.governing),
        action: d.governing.action,
        dueAt: d.governing.expiresAt,
        startedAt: now,
        endsAt: now + duration,
        dryRun: false,
        ...(d.escalation !== undefined ? { escalation: d.escalation } : {})
      })
      if (d.governing.action === "Replace" && d.governing.capacityFirst) replacementOf(n, now)
      heap.push({ at: now + duration, seq: seq++, kind: "repairEnd", node: n.name })
      return
    }
    if (d._tag === "WouldRepair") {
      closeHold(n, now, "started")
      const key = `${d.governing.conditionType}@${d.governing.lastTransitionTime ?? ""}`
      if (!n.wouldRepair.has(key)) {
        n.wouldRepair.add(key)
        repairs.push({
          node: n.name,
          pool: n.scope,
          zone: n.zone,
          conditionType: d.governing.conditionType,
          reason: reasonOf(d.governing),
          action: d.governing.action,
          dueAt: d.governing.expiresAt,
          startedAt: now,
          endsAt: now,
          dryRun: true,
          ...(d.escalation !== undefined ? { escalation: d.escalation } : {})
        })
      }
      return
    }
    const hold = holdOf(d)
    if (hold === undefined || m === undefined) {
      closeHold(n, now, "recovered")
      return
    }
    if (n.hold !== undefined && n.hold.cause !== hold.cause) closeHold(n, now, "held otherwise")
    if (n.hold === undefined) n.hold = { ...hold, from: now, m }
    // Woken when its pool's counts ease, as the controller's BlockedNodes wakes held nodes.
    blocked.block(n.name, n.scope)
  }

  /** Nodes woken by an easing pool, decided at once in the order their repairs fell due. */
  const drainWoken = (now: number) => {
    while (woken.size > 0) {
      const batch = [...woken]
        .map((name) => nodes.get(name))
        .filter((n): n is SimNode => n !== undefined)
        .sort((a, b) => (a.hold?.m.expiresAt ?? 0) - (b.hold?.m.expiresAt ?? 0) || (a.name < b.name ? -1 : 1))
      woken.clear()
      for (const n of batch) look(n, now)
    }
  }

  /** A repair ends: as modeled (`gone` false), or because the recording shows the node deleted first. */
  const endRepair = (n: SimNode, now: number, gone: boolean) => {
    const r = n.repair
    if (r === undefined) return
    n.repair = undefined
    const entry = repairs[r.index]
    if (entry !== undefined && now < entry.endsAt) repairs[r.index] = { ...entry, endsAt: now }
    counter.setRepair(n.name, undefined)
    // It ended well (every replayed repair does; a recorded deletion is the live controller's repair ending).
    repairedWell(n, r.m, entry?.startedAt ?? now, now)
    if (r.m.action === "Reboot" && !gone) {
      // Remembered as the controller's RebootStore does: the fault back within the window escalates the next repair.
      reboots.set(n.name, [
        ...(reboots.get(n.name) ?? []).filter((x) => x.conditionType !== r.m.conditionType),
        {
          node: n.name,
          providerID: n.view.providerID ?? "",
          uid: "",
          conditionType: r.m.conditionType,
          reason: r.m.reason,
          repairId: `${n.name}@${entry?.startedAt ?? now}`,
          at: now
        }
      ])
      // Back healthy: the conditions that made it unhealthy are gone; the recording applies again from here.
      for (const p of config.policies) {
        const c = n.conditions.get(p.conditionType)
        if (c !== undefined && c.status === p.status) n.conditions.delete(p.conditionType)
      }
      refresh(n)
      look(n, now)
      return
    }
    n.replaced = true
    nodesReplaced.set(n.name, n)
    nodes.delete(n.name)
    counter.remove(n.name)
    waiting.remove(n.name)
    if (!(r.m.capacityFirst && r.m.action === "Replace")) replacementOf(n, now)
  }

  /** A recovery the recording shows after the replay started the node's repair: the repair may not have been needed. */
  const afterRepair = (n: SimNode, e: HistoryEvent) => {
    const r = n.repaired
    if (
      r === undefined ||
      r.seen ||
      e.kind !== "condition" ||
      e.type !== r.conditionType ||
      config.policies.some((p) => p.conditionType === e.type && p.status === e.status)
    )
      return
    r.seen = true
    flaps.push({
      node: n.name,
      pool: n.scope,
      conditionType: r.conditionType,
      reason: r.reason,
      from: r.at,
      to: e.atMs,
      tolerationMs: r.tolerationMs,
      kind: "afterRepair"
    })
  }

  /** Ends a condition's unhealthy episode: a flap when it recovered by itself. */
  const episodeEnd = (n: SimNode, before: ReadonlyArray<PolicyMatch>, type: string, now: number) => {
    const was = before.find((m) => m.conditionType === type)
    if (was === undefined || was.lastTransitionTime === undefined) return
    const still = matchPolicies(config, n.view).some((m) => m.conditionType === type)
    if (still) return
    flaps.push({
      node: n.name,
      pool: n.scope,
      conditionType: type,
      reason: reasonOf(was),
      from: was.lastTransitionTime,
      to: now,
      tolerationMs: was.tolerationMs,
      kind: now - was.lastTransitionTime < was.tolerationMs ? "beforeToleration" : "afterToleration"
    })
  }

  const apply = (e: HistoryEvent) => {
    if (e.kind === "mark") return
    if (e.kind === "nodepool") {
      if (e.deleted === true) nodePools.delete(e.pool)
      else
        nodePools.set(e.pool, { claims: e.claims, vetoed: e.doNotRepair === true, budgets: e.budgets ?? [] })
      // A pool's nodes may be decided otherwise now (veto, budgets): held ones are looked at again.
      blocked.eased(e.pool)
      return
    }
    const live = nodes.get(e.node)
    const gone = live === undefined ? nodesReplaced.get(e.node) : undefined
    const repaired = gone ?? (live?.repair !== undefined ? live : undefined)
    if (repaired !== undefined && e.kind !== "deleted") {
      ignored++
      afterRepair(repaired, e)
      return
    }
    if (live === undefined && gone !== undefined) return
    if (e.kind === "deleted") {
      if (live === undefined) return
      closeHold(live, e.atMs, "deleted")
      if (live.repair !== undefined) {
        // Gone under the replay's repair: in a recording of a live controller, its own repair removing the node.
        // The replay's repair ends here (its slot frees as the controller's did), not at the modeled duration.
        endRepair(live, e.atMs, true)
        return
      }
      nodes.delete(e.node)
      counter.remove(e.node)
      waiting.remove(e.node)
      return
    }
    const n = live ?? newNode(e.node, e.pool, e.zone, e.atMs)
    const before = matchPolicies(config, n.view)
    if (e.pool !== undefined) n.pool = e.pool === "" ? undefined : e.pool
    if (e.zone !== undefined) n.zone = e.zone === "" ? undefined : e.zone
    if (e.kind === "node") {
      if (e.doNotRepair !== undefined) n.doNotRepair = e.doNotRepair
    } else if (e.kind === "scheduledEvent") {
      n.scheduled.set(e.id, scheduledEventOf(e))
    } else {
      const old = n.conditions.get(e.type)
      // Kubernetes moves lastTransitionTime only when the status changes; a new reason alone keeps it.
      const kept = old !== undefined && old.status === e.status
      const since = kept ? old.lastTransitionTime : e.atMs
      // The controller's first sight of the status (decide/toleration.ts): here, when the recording shows it.
      const seen = kept ? old.firstSeen : e.atMs
      n.conditions.set(e.type, {
        type: e.type,
        status: e.status,
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
        ...(e.message !== undefined ? { message: e.message } : {}),
        ...(since !== undefined ? { lastTransitionTime: since } : {}),
        ...(seen !== undefined ? { firstSeen: seen } : {})
      })
    }
    refresh(n)
    if (e.kind === "condition") episodeEnd(n, before, e.type, e.atMs)
    look(n, e.atMs)
  }

  /** Nodes the replay replaced, by name, for the recording's later lines about them. */
  const nodesReplaced = new Map<string, SimNode>()
  const runTimer = (t: Timer) => {
    const n = nodes.get(t.node)
    if (n === undefined) return
    if (t.kind === "repairEnd") {
      endRepair(n, t.at, false)
      return
    }
    if (n.nextLook !== t.at) return
    n.nextLook = undefined
    look(n, t.at)
  }

  let i = 0
  for (;;) {
    const next = events[i]
    const timer = heap.peek()
    const timerDue = timer !== undefined && timer.at <= until && (next === undefined || timer.at < next.atMs)
    if (timerDue) {
      heap.pop()
      runTimer(timer)
      drainWoken(timer.at)
      continue
    }
    if (next === undefined || next.atMs > until) break
    i++
    apply(next)
    drainWoken(next.atMs)
  }
  for (const n of nodes.values()) closeHold(n, until, "still held")
  liftQuiet(until)
  for (const open of openRelapseHolds.values())
    relapseHolds.push({ ...open, to: until, outcome: "still held" })
  return {
    from: first,
    to: until,
    nodes: new Set(events.flatMap((e) => ("node" in e ? [e.node] : []))).size,
    events: events.length,
    ignored,
    repairs,
    holds: holds.sort((a, b) => a.from - b.from || (a.node < b.node ? -1 : 1)),
    flaps: flaps.sort((a, b) => a.from - b.from || (a.node < b.node ? -1 : 1)),
    relapseHolds: relapseHolds.sort((a, b) => a.from - b.from || (a.pool < b.pool ? -1 : 1)),
    relapses
  }
}
