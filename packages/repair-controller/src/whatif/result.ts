/**
 * What a what-if replay reports (whatif/replay.ts): the repairs the controller started (or, dry-run, would have),
 * the holds of the nodes it did not repair and why, the flaps of the recording, the relapses and the relapse holds;
 * and `holdOf`, a decision's hold in words. Reporting only.
 */
import type { Decision } from "../decide/decide.ts"
import type { Escalation } from "../decide/escalation.ts"
import type { Relapse } from "../domain/RelapseLedger.ts"
import { isoTime } from "./history.ts"

/** How long a replacement takes to join unless `repairDurationMs` says: launch, boot, register. */
export const REPLACE_OVERHEAD_MS = 5 * 60_000

export interface ReplayOptions {
  /**
   * How long a replacement takes to join after it is asked for (ms; default REPLACE_OVERHEAD_MS): about how long a
   * Replace takes, the recording having no pods to drain. A Reboot takes the config's `reboot.settleSeconds`.
   */
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
  /** When its toleration ran out (undefined: unknown, as for a condition without lastTransitionTime). */
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
