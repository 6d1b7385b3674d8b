/**
 * The repair state machine, pure. `nextAction` says what the current phase needs done; the runner does it
 * and reports a `Fact`; `advance` folds the fact into the record, which the runner persists before the next
 * action. Every action is safe to repeat after a crash: the runner observes before it mutates (the taint
 * is checked, the instance is described before terminate, launches carry the repair id as idempotency token).
 *
 *   Replace, capacity first (default): Tainting -> Replacing -> Draining -> [CapturingLogs] -> Terminating
 *            -> RemovingNode -> Succeeded (the replacement is Ready before a pod moves, so pods move once)
 *            \-> (no replacement to be had) -> removeFirst from Draining on, or Failed (policy `onNoCapacity`)
 *            Replacing waits for the replacement to pass the health gate (decide/replacementHealth.ts); one that
 *            fails it (or its bound) is no capacity: another is launched, up to `replacement.maxAttempts`, then Failed
 *   Replace, remove first: Tainting -> Draining -> [CapturingLogs] -> Terminating -> RemovingNode -> Replacing
 *            -> Succeeded
 *   Reboot:  Tainting -> Draining -> Rebooting -> Untainting -> Succeeded
 *                                             \-> (condition still False) -> [CapturingLogs] -> Terminating ...
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { PolicyMatch } from "../decide/policyMatch.ts"
import type { HealthExpectations } from "../decide/replacementHealth.ts"
import type { InstanceFacts, Replacement } from "../domain/Instance.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"

export type Action =
  | { readonly _tag: "Taint" }
  /** Evict the current tier. `deadlinePassed` with mode `wait`: keep evicting, say so once. */
  | { readonly _tag: "Drain"; readonly deadlinePassed: boolean }
  /** Drain deadline passed with mode `force`: delete what is left. */
  | { readonly _tag: "ForceDrain" }
  | { readonly _tag: "CaptureLogs"; readonly timeoutMs: number }
  | { readonly _tag: "Reboot" }
  | { readonly _tag: "AwaitReboot"; readonly settledAt: number; readonly timesOutAt: number }
  | { readonly _tag: "Terminate" }
  | { readonly _tag: "AwaitInstanceGone" }
  | { readonly _tag: "DeleteNode" }
  | { readonly _tag: "LaunchReplacement" }
  /** `healthTimesOutAt`: the replacement was Ready; it passes the health gate by then or fails it. */
  | { readonly _tag: "AwaitReplacement"; readonly timesOutAt: number; readonly healthTimesOutAt?: number }
  | { readonly _tag: "Untaint" }
  | { readonly _tag: "Done" }

export type Fact =
  | { readonly _tag: "Tainted" }
  | { readonly _tag: "DrainDeadlinePassed" }
  /** A PodDisruptionBudget (or an error) refused evictions: the drain backs off (repair/plan.ts). */
  | { readonly _tag: "EvictionBlocked" }
  /** Evictions went through again after a block: the backoff starts afresh. */
  | { readonly _tag: "EvictionsAccepted" }
  | { readonly _tag: "Drained" }
  | {
      readonly _tag: "LogCaptureFinished"
      readonly outcome: "captured" | "timed-out" | "skipped" | "failed"
      /** The object the bundle went to (`s3://bucket/key`), when captured to one. */
      readonly object?: string
    }
  | { readonly _tag: "RebootRequested" }
  /** The node is back after the reboot; `stillFailing` when the governing condition still matches. */
  /** `cannotReplace`: the owner's word that no replacement can come from it (MachineOwner.cannotReplace). */
  | { readonly _tag: "NodeBack"; readonly stillFailing: boolean; readonly cannotReplace?: string }
  | { readonly _tag: "RebootTimedOut"; readonly cannotReplace?: string }
  /** Remove first through a group: its members before the termination, journaled before the terminate call. */
  | {
      readonly _tag: "RemovalRecorded"
      readonly group: string
      readonly membersBefore: ReadonlyArray<string>
    }
  | { readonly _tag: "TerminateRequested" }
  | { readonly _tag: "InstanceGone" }
  | { readonly _tag: "NodeRemoved" }
  | { readonly _tag: "ReplacementLaunched"; readonly replacement: Replacement }
  /** More is known of the replacement (the member a grown group launched, the Node a NodeClaim registered). */
  | { readonly _tag: "ReplacementProgress"; readonly replacement: Replacement }
  /** The replacement is capacity: Ready and, where the repair expects more, through the health gate. */
  | {
      readonly _tag: "ReplacementReady"
      /** The replacement's Node, when one Node stands for it: the health gate reads it (actions/replacementGate.ts). */
      readonly nodeName?: string
      /** The owner's words for the ReplacementReady Event. */
      readonly note?: string
    }
  /** The owner reports the replacement Ready; the health gate has not decided yet (its bound starts now). */
  | { readonly _tag: "ReplacementUp" }
  /**
   * The replacement failed the health gate (`check`), or its bound: never capacity. Another is launched while the
   * repair's failed replacements are fewer than `attemptsAllowed` (`replacement.maxAttempts` as configured).
   */
  | {
      readonly _tag: "ReplacementUnhealthy"
      readonly nodeName?: string
      readonly check: string
      readonly why: string
      readonly attemptsAllowed: number
    }
  | { readonly _tag: "ReplacementTimedOut" }
  /** The owner cannot provide one (capacity, limits, a shifted zone): the policy's fallback applies. */
  | { readonly _tag: "ReplacementUnavailable"; readonly why: string }
  | { readonly _tag: "Untainted" }
  | { readonly _tag: "Aborted"; readonly why: string }

const iso = (ms: number) => new Date(ms).toISOString()
const ms = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s))

/** A new record for a node that `decide` said to repair. */
export const newRepairRecord = (
  args: {
    readonly id: string
    readonly match: PolicyMatch
    readonly node: {
      readonly name: string
      readonly uid: string
      readonly providerID: string
      readonly pool?: string
      readonly zone?: string
      readonly labels: Readonly<Record<string, string>>
      readonly instance: InstanceFacts
    }
    /** What the replacement must show to count as capacity (decide/replacementHealth.ts). */
    readonly replacementExpects?: HealthExpectations
  },
  now: number
): RepairRecord => ({
  v: 3,
  id: args.id,
  phase: "Tainting",
  action: args.match.action === "Reboot" ? "Reboot" : "Replace",
  order: args.match.action !== "Reboot" && args.match.capacityFirst ? "capacityFirst" : "removeFirst",
  onNoCapacity: args.match.onNoCapacity,
  ...(args.match.requestedBy !== undefined ? { requestedBy: { ...args.match.requestedBy } } : {}),
  conditionType: args.match.conditionType,
  conditionStatus: args.match.status,
  reason: args.match.reason,
  startedAt: iso(now),
  ...(args.match.expiresAt !== undefined ? { tolerationExpiredAt: iso(args.match.expiresAt) } : {}),
  phaseSince: iso(now),
  drainMode: args.match.drainMode,
  drainDeadlineMs: args.match.drainDeadlineMs,
  captureLogs: args.match.captureLogs,
  ...(args.replacementExpects !== undefined
    ? {
        replacementExpects: {
          agentConditions: [...args.replacementExpects.agentConditions],
          ...(args.replacementExpects.gpus !== undefined ? { gpus: args.replacementExpects.gpus } : {}),
          ...(args.replacementExpects.dcgmDiagnostic !== undefined
            ? { dcgmDiagnostic: { ...args.replacementExpects.dcgmDiagnostic } }
            : {})
        }
      }
    : {}),
  node: {
    ...args.node,
    labels: { ...args.node.labels },
    instance: { ...args.node.instance, launch: { ...args.node.instance.launch } }
  }
})

export const nextAction = (r: RepairRecord, config: ControllerConfig, now: number): Action => {
  switch (r.phase) {
    case "Tainting":
      return { _tag: "Taint" }
    case "Draining": {
      const deadline = ms(r.drainDeadline)
      const passed = deadline !== undefined && now >= deadline
      if (passed && r.drainMode === "force") return { _tag: "ForceDrain" }
      return { _tag: "Drain", deadlinePassed: passed }
    }
    case "CapturingLogs":
      return { _tag: "CaptureLogs", timeoutMs: config.logCapture.timeoutSeconds * 1000 }
    case "Rebooting": {
      const at = ms(r.rebootRequestedAt)
      if (at === undefined) return { _tag: "Reboot" }
      return {
        _tag: "AwaitReboot",
        settledAt: at + config.reboot.settleSeconds * 1000,
        timesOutAt: at + config.reboot.timeoutSeconds * 1000
      }
    }
    case "Terminating":
      return r.terminateRequestedAt === undefined ? { _tag: "Terminate" } : { _tag: "AwaitInstanceGone" }
    case "RemovingNode":
      return { _tag: "DeleteNode" }
    case "Replacing":
      return r.replacement === undefined
        ? { _tag: "LaunchReplacement" }
        : {
            _tag: "AwaitReplacement",
            timesOutAt: (ms(r.replacementRequestedAt) ?? now) + config.replacement.timeoutSeconds * 1000,
            ...(r.replacementReadyAt !== undefined
              ? {
                  healthTimesOutAt:
                    Date.parse(r.replacementReadyAt) + config.replacement.healthTimeoutSeconds * 1000
                }
              : {})
          }
    case "Untainting":
      return { _tag: "Untaint" }
    case "Succeeded":
    case "Failed":
      return { _tag: "Done" }
  }
}

const draining = (r: RepairRecord, now: number): RepairRecord => ({
  ...r,
  phase: "Draining",
  drainStartedAt: iso(now),
  drainDeadline: iso(now + r.drainDeadlineMs)
})

/** Capacity first without capacity: on to the drain as remove first, or Failed, as the policy says. */
const applyOnNoCapacity = (r: RepairRecord, why: string, now: number): RepairRecord =>
  r.onNoCapacity === "fail"
    ? {
        ...r,
        phase: "Failed",
        failure: `no replacement could be had before removal: ${why}`,
        finishedAt: iso(now)
      }
    : draining({ ...r, order: "removeFirst", fallback: why }, now)

const withoutEvictionBlock = (r: RepairRecord): RepairRecord => {
  const { evictionBlocked: _blocked, ...rest } = r
  return rest
}

/** After the drain (or a failed reboot): capture logs first when the policy asks, then terminate. */
const towardsTermination = (r: RepairRecord): RepairRecord =>
  r.captureLogs && r.logsCaptured === undefined
    ? { ...r, phase: "CapturingLogs" }
    : { ...r, phase: "Terminating" }

/**
 * Folds a fact into the record. A fact that does not fit the phase leaves the record unchanged. A new phase
 * starts its deadline and retry budget afresh.
 */
export const advance = (r: RepairRecord, fact: Fact, now: number): RepairRecord => {
  const next = fold(r, fact, now)
  if (next.phase === r.phase) return next
  const { retry: _retry, ...rest } = next
  return { ...rest, phaseSince: iso(now) }
}

/**
 * The idempotency token of the repair's current launch: the repair id for the first, then one per attempt, so a
 * replacement launched after a failed one is a new machine (EC2's ClientToken, kwok's and Karpenter's names).
 */
export const replacementToken = (r: RepairRecord): string => {
  const failed = r.failedReplacements?.length ?? 0
  return failed === 0 ? r.id : `${r.id}-a${failed + 1}`
}

/** A replacement that failed the health gate is recorded and dropped; another is asked for, or the repair fails. */
const unhealthyReplacement = (
  r: RepairRecord,
  fact: Extract<Fact, { _tag: "ReplacementUnhealthy" }>,
  now: number
): RepairRecord => {
  const { replacement: rep, replacementRequestedAt: _at, replacementReadyAt: _ready, ...rest } = r
  const failed = [
    ...(r.failedReplacements ?? []),
    {
      ...((rep?.nodeName ?? fact.nodeName) !== undefined ? { nodeName: rep?.nodeName ?? fact.nodeName } : {}),
      ...(rep?.instanceId !== undefined ? { instanceId: rep.instanceId } : {}),
      ...(rep?.nodeClaim !== undefined ? { nodeClaim: rep.nodeClaim } : {}),
      check: fact.check,
      why: fact.why,
      at: iso(now)
    }
  ]
  const next: RepairRecord = { ...rest, failedReplacements: failed }
  if (failed.length < fact.attemptsAllowed) return next
  // Replacements keep coming up broken (an image, a template, a driver): the node is kept for an operator.
  return {
    ...next,
    phase: "Failed",
    failure: `${failed.length} replacements failed the health gate (replacement.maxAttempts ${fact.attemptsAllowed}); the last: ${fact.check}: ${fact.why}`,
    finishedAt: iso(now)
  }
}

const replacing = (r: RepairRecord, fact: Fact, now: number): RepairRecord => {
  const first = r.order === "capacityFirst"
  switch (fact._tag) {
    case "ReplacementLaunched":
      return {
        ...r,
        replacement: fact.replacement,
        replacementRequestedAt: r.replacementRequestedAt ?? iso(now)
      }
    case "ReplacementProgress":
      return { ...r, replacement: fact.replacement }
    case "ReplacementUp":
      return r.replacementReadyAt !== undefined ? r : { ...r, replacementReadyAt: iso(now) }
    case "ReplacementUnhealthy":
      return unhealthyReplacement(r, fact, now)
    case "ReplacementReady":
      return first ? draining(r, now) : { ...r, phase: "Succeeded", finishedAt: iso(now) }
    case "ReplacementUnavailable":
      return first
        ? applyOnNoCapacity(r, fact.why, now)
        : { ...r, phase: "Failed", failure: `no replacement: ${fact.why}`, finishedAt: iso(now) }
    case "ReplacementTimedOut":
      return first
        ? applyOnNoCapacity(r, "the replacement did not become Ready in time", now)
        : { ...r, phase: "Failed", failure: "replacement did not become Ready in time", finishedAt: iso(now) }
    default:
      return r
  }
}

const fold = (r: RepairRecord, fact: Fact, now: number): RepairRecord => {
  if (fact._tag === "Aborted") return { ...r, phase: "Failed", failure: fact.why, finishedAt: iso(now) }
  switch (r.phase) {
    case "Tainting":
      if (fact._tag !== "Tainted") return r
      return r.order === "capacityFirst" ? { ...r, phase: "Replacing" } : draining(r, now)
    case "Draining":
      if (fact._tag === "DrainDeadlinePassed") return { ...r, drainDeadlinePassed: true }
      if (fact._tag === "EvictionBlocked")
        return { ...r, evictionBlocked: { rounds: (r.evictionBlocked?.rounds ?? 0) + 1, at: iso(now) } }
      if (fact._tag === "EvictionsAccepted") return withoutEvictionBlock(r)
      if (fact._tag !== "Drained") return r
      return r.action === "Reboot"
        ? { ...withoutEvictionBlock(r), phase: "Rebooting" }
        : towardsTermination(withoutEvictionBlock(r))
    case "CapturingLogs":
      return fact._tag === "LogCaptureFinished"
        ? {
            ...r,
            phase: "Terminating",
            logsCaptured: fact.outcome,
            ...(fact.object ? { logBundle: fact.object } : {})
          }
        : r
    case "Rebooting":
      if (fact._tag === "RebootRequested") return { ...r, rebootRequestedAt: iso(now) }
      if (fact._tag === "NodeBack" && !fact.stillFailing) return { ...r, phase: "Untainting" }
      if ((fact._tag === "NodeBack" && fact.stillFailing) || fact._tag === "RebootTimedOut")
        return fact.cannotReplace !== undefined
          ? {
              ...r,
              phase: "Failed",
              failure: `the reboot did not heal the node, and no replacement can be launched: ${fact.cannotReplace}`,
              finishedAt: iso(now)
            }
          : towardsTermination({ ...r, action: "Replace", escalatedFrom: "Reboot" })
      return r
    case "Terminating":
      if (fact._tag === "RemovalRecorded")
        return { ...r, removedFromGroup: { group: fact.group, membersBefore: [...fact.membersBefore] } }
      if (fact._tag === "TerminateRequested") return { ...r, terminateRequestedAt: iso(now) }
      if (fact._tag === "InstanceGone")
        return {
          ...r,
          phase: "RemovingNode",
          terminateRequestedAt: r.terminateRequestedAt ?? iso(now),
          instanceGoneAt: iso(now)
        }
      return r
    case "RemovingNode":
      if (fact._tag !== "NodeRemoved") return r
      if (r.order === "capacityFirst") return { ...r, phase: "Succeeded", finishedAt: iso(now) }
      // A replacement asked for before a fallback gets a fresh wait now that the node is gone.
      return {
        ...r,
        phase: "Replacing",
        ...(r.replacement !== undefined ? { replacementRequestedAt: iso(now) } : {})
      }
    case "Replacing":
      return replacing(r, fact, now)
    case "Untainting":
      return fact._tag === "Untainted" ? { ...r, phase: "Succeeded", finishedAt: iso(now) } : r
    case "Succeeded":
    case "Failed":
      return r
  }
}
