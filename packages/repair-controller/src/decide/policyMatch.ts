/**
 * Which repair policies a node's conditions match, with the knobs that apply to each match: catalog policy,
 * then the config's per-condition-type policy, then the config's per-reason override (exact reason first,
 * then its catalog template). Reason-aware policy is what Karpenter lacks.
 */
import { type RepairAction, resolveReason } from "@nodemend/reason-codes"
import type {
  ControllerConfig,
  DrainMode,
  NoCapacity,
  PolicyConfig,
  RepairKnobs
} from "../config/ControllerConfig.ts"
import type { ConditionView, NodeView } from "../domain/NodeView.ts"
import { toleratedFrom } from "./toleratedFrom.ts"

export interface PolicyMatch {
  readonly conditionType: string
  readonly status: string
  /** Reason on the condition (may be empty). */
  readonly reason: string
  readonly message: string
  /** As the node wrote it: never trusted for time (decide/toleration.ts). */
  readonly lastTransitionTime: number | undefined
  /** When its toleration started: `toleratedFrom` (the later of lastTransitionTime and the first sight). */
  readonly toleratedFrom: number | undefined
  readonly tolerationMs: number
  /** toleratedFrom + toleration; undefined when the condition carries no lastTransitionTime. */
  readonly expiresAt: number | undefined
  readonly action: RepairAction
  readonly drainMode: DrainMode
  readonly drainDeadlineMs: number
  readonly captureLogs: boolean
  readonly capacityFirst: boolean
  readonly onNoCapacity: NoCapacity
  /** Where the action came from, for events and logs. */
  readonly actionSource: "reason-override" | "policy" | "catalog" | "default"
  /** A RepairRequest's match (decide/repairRequest.ts): who asked and the request (`namespace/name`). */
  readonly requestedBy?: { readonly username: string; readonly request: string }
}

/** The catalog's default action for a reason, if the reason belongs to this condition type. */
const catalogAction = (c: ConditionView): RepairAction | undefined => {
  if (!c.reason) return undefined
  const r = resolveReason(c.reason)
  return r !== undefined && r.entry.conditionType === c.type ? r.defaultAction : undefined
}

const reasonOverride = (config: ControllerConfig, c: ConditionView): RepairKnobs | undefined => {
  if (!c.reason) return undefined
  const exact = config.reasons[c.reason]
  if (exact !== undefined) return exact
  const r = resolveReason(c.reason)
  return r !== undefined ? config.reasons[r.entry.code] : undefined
}

const matchOne = (
  config: ControllerConfig,
  p: PolicyConfig,
  c: ConditionView,
  createdAt: number | undefined
): PolicyMatch => {
  const o = reasonOverride(config, c)
  const fromCatalog = catalogAction(c)
  const action: RepairAction = o?.action ?? p.action ?? fromCatalog ?? "Replace"
  const actionSource =
    o?.action !== undefined
      ? "reason-override"
      : p.action !== undefined
        ? "policy"
        : fromCatalog !== undefined
          ? "catalog"
          : "default"
  const tolerationMs = (o?.tolerationSeconds ?? p.tolerationSeconds) * 1000
  const from = toleratedFrom(c, createdAt)
  return {
    conditionType: c.type,
    status: c.status,
    reason: c.reason ?? "",
    message: c.message ?? "",
    lastTransitionTime: c.lastTransitionTime,
    toleratedFrom: from,
    tolerationMs,
    expiresAt: from === undefined ? undefined : from + tolerationMs,
    action,
    drainMode: o?.drainMode ?? p.drainMode ?? config.drain.onDeadline,
    drainDeadlineMs:
      (o?.drainDeadlineSeconds ?? p.drainDeadlineSeconds ?? config.drain.deadlineSeconds) * 1000,
    captureLogs: o?.captureLogs ?? p.captureLogs ?? false,
    capacityFirst: o?.capacityFirst ?? p.capacityFirst ?? config.replacement.capacityFirst,
    onNoCapacity: o?.onNoCapacity ?? p.onNoCapacity ?? config.replacement.onNoCapacity,
    actionSource
  }
}

/** Every policy the node currently matches (status equal), expired or not. */
export const matchPolicies = (config: ControllerConfig, node: NodeView): ReadonlyArray<PolicyMatch> => {
  const out: PolicyMatch[] = []
  for (const p of config.policies) {
    const c = node.conditions.find((x) => x.type === p.conditionType)
    if (c !== undefined && c.status === p.status) out.push(matchOne(config, p, c, node.createdAt))
  }
  return out
}

/** True when any policy matches; the breaker's notion of "unhealthy" (toleration ignored). */
export const matchesAnyPolicy = (config: ControllerConfig, node: NodeView): boolean =>
  config.policies.some((p) =>
    node.conditions.some((c) => c.type === p.conditionType && c.status === p.status)
  )
