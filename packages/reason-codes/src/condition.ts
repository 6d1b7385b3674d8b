import { CONDITION_TYPE_INFO, NEURON_READY } from "./catalog.ts"
import { resolveReason, type ResolvedReason } from "./codes.ts"
import { CONDITION_TYPES, type ConditionType } from "./types.ts"

/** The subset of a Kubernetes NodeCondition this package reads. */
export interface NodeConditionLike {
  readonly type?: unknown
  readonly status?: unknown
  readonly reason?: unknown
  readonly message?: unknown
  readonly lastTransitionTime?: unknown
}

export type ParsedCondition =
  /** One of ours, True, with its ready reason. */
  | { readonly kind: "ready"; readonly conditionType: ConditionType }
  /** One of ours with a reason in the catalog. */
  | {
      readonly kind: "fault"
      readonly conditionType: ConditionType
      readonly status: "True" | "False" | "Unknown"
      readonly resolved: ResolvedReason
    }
  /** One of ours, but the reason is not in the catalog (newer agent, or hand-written). */
  | {
      readonly kind: "unknown-reason"
      readonly conditionType: ConditionType
      readonly reason: string
      readonly detail: string
    }
  /** Not a condition type nodemend owns (kubelet's Ready, DiskPressure, ...). */
  | { readonly kind: "not-ours"; readonly type: string }
  /** Not a NodeCondition at all. */
  | { readonly kind: "invalid"; readonly detail: string }

export const isConditionType = (t: unknown): t is ConditionType =>
  typeof t === "string" && (CONDITION_TYPES as readonly string[]).includes(t)

const READY_REASONS = new Set<string>([
  ...CONDITION_TYPE_INFO.map((c) => c.readyReason),
  NEURON_READY.readyReason
])

/** Parses an arbitrary value that should be a NodeCondition into a known code or a clear result. */
export const parseNodeCondition = (condition: unknown): ParsedCondition => {
  if (typeof condition !== "object" || condition === null) return { kind: "invalid", detail: "not an object" }
  const c = condition as NodeConditionLike
  if (typeof c.type !== "string" || c.type === "")
    return { kind: "invalid", detail: "type is missing or not a string" }
  if (!isConditionType(c.type)) return { kind: "not-ours", type: c.type }
  const status = c.status
  if (status !== "True" && status !== "False" && status !== "Unknown")
    return {
      kind: "invalid",
      detail: `status of ${c.type} must be True, False or Unknown, got ${JSON.stringify(status)}`
    }
  if (typeof c.reason !== "string" || c.reason === "")
    return { kind: "unknown-reason", conditionType: c.type, reason: "", detail: "reason is missing" }
  if (status === "True" && READY_REASONS.has(c.reason)) return { kind: "ready", conditionType: c.type }
  const resolved = resolveReason(c.reason)
  if (resolved === undefined)
    return {
      kind: "unknown-reason",
      conditionType: c.type,
      reason: c.reason,
      detail: `unknown reason "${c.reason}"`
    }
  if (resolved.entry.conditionType !== c.type)
    return {
      kind: "unknown-reason",
      conditionType: c.type,
      reason: c.reason,
      detail: `reason "${c.reason}" belongs to ${resolved.entry.conditionType}, not ${c.type}`
    }
  return { kind: "fault", conditionType: c.type, status, resolved }
}
