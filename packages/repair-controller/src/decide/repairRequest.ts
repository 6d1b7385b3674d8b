/**
 * A RepairRequest as one more match for decide.ts (issue #41 item 4, ADR 0020), as a cloud's scheduled event is
 * (decide/scheduledEvents.ts, ADR 0018): the controller's condition type `RepairRequested` with the request's
 * reason, due at once (its toleration is the asking), so the veto, the stand-downs, the breakers, the relapse
 * hold, the in-flight budget and dry-run apply unchanged. Pure: the caller passes the request as read, the proof
 * that the API server enforced `spec.requestedBy` when it was created, and the clock reading.
 */
import {
  MANUAL_REPAIR_REASON,
  type RepairAction,
  REPAIR_REQUESTED_CONDITION_TYPE,
  resolveReason
} from "@nodemend/reason-codes"
import type { ControllerConfig, RepairKnobs } from "../config/ControllerConfig.ts"
import type { PolicyMatch } from "./policyMatch.ts"

/** A request as the controller weighs it (read from the API server, in the controller's own namespace). */
export interface RequestView {
  readonly namespace: string
  readonly name: string
  readonly uid: string
  /** The API server's creationTimestamp (whole seconds). */
  readonly createdAt: number
  readonly nodeName: string
  readonly reason: string
  readonly message: string
  /** The creator's username, as the admission policy made it be. */
  readonly requestedBy: string
}

/**
 * What the controller read of the admission policy that proves `requestedBy`: in force (policy and binding, Fail
 * and Deny, the username rule) since `since`, or not (why).
 */
export type PolicyProof =
  | { readonly _tag: "InForce"; readonly since: number }
  | { readonly _tag: "Absent"; readonly why: string }

/**
 * How long after the policy's (or binding's) creation a request counts as checked by it: creationTimestamp has
 * whole seconds, and each API server loads a new policy from its informer (about a second).
 */
export const POLICY_SETTLE_MS = 3_000

/** `ns/name`: the request as the record, Events and metrics-free logs name it. */
export const requestRef = (r: Pick<RequestView, "namespace" | "name">): string => `${r.namespace}/${r.name}`

/** Whether the reason is one a request may name: a catalog reason code, or the manual one. */
export const isRequestableReason = (reason: string): boolean =>
  reason === MANUAL_REPAIR_REASON || resolveReason(reason) !== undefined

/** A node's identity (its kubelet's credentials) never asks for a repair, whatever RBAC was granted. */
const isNodeIdentity = (username: string) => username.startsWith("system:node:")

/** The knobs of a reason: `reasons.<reason>` (exact, then the catalog template), then its condition type's policy. */
const knobsOf = (config: ControllerConfig, reason: string): RepairKnobs | undefined => {
  const resolved = resolveReason(reason)
  const override = config.reasons[reason] ?? (resolved ? config.reasons[resolved.entry.code] : undefined)
  const policy = resolved
    ? config.policies.find((p) => p.conditionType === resolved.entry.conditionType)
    : undefined
  return { ...policy, ...override }
}

/** The action a requested repair takes: the reason's override or policy, else the catalog's, else Replace. */
export const requestedAction = (config: ControllerConfig, reason: string): RepairAction =>
  knobsOf(config, reason)?.action ?? resolveReason(reason)?.defaultAction ?? "Replace"

/** Why the request is refused for good, or undefined when it may be decided. */
export const requestRefusal = (
  config: ControllerConfig,
  r: RequestView,
  proof: PolicyProof
): string | undefined => {
  if (proof._tag === "Absent")
    return `who asked is not proven: ${proof.why}; the controller refuses requests it cannot attribute (fail closed)`
  // Written so that an unreadable creation time (NaN) is refused too.
  if (!(r.createdAt >= proof.since + POLICY_SETTLE_MS))
    return `who asked is not proven: the request was created before the admission policy was in force (${new Date(proof.since).toISOString()})`
  if (isNodeIdentity(r.requestedBy)) return `${r.requestedBy} is a node: nodes do not ask for repairs`
  if (!isRequestableReason(r.reason))
    return `reason ${r.reason} is no reason code of @nodemend/reason-codes nor ${MANUAL_REPAIR_REASON}`
  if (requestedAction(config, r.reason) === "None")
    return `reason ${r.reason} is repaired by no action (None): reported only`
  return undefined
}

/** The request as a match, due at its creation: its knobs as the reason's fault would have them. */
export const requestedMatch = (config: ControllerConfig, r: RequestView): PolicyMatch => {
  const k = knobsOf(config, r.reason)
  const override = config.reasons[r.reason]?.action !== undefined
  return {
    conditionType: REPAIR_REQUESTED_CONDITION_TYPE,
    status: "True",
    reason: r.reason,
    message: requestText(r),
    lastTransitionTime: undefined,
    toleratedFrom: r.createdAt,
    tolerationMs: 0,
    expiresAt: r.createdAt,
    action: requestedAction(config, r.reason),
    drainMode: k?.drainMode ?? config.drain.onDeadline,
    drainDeadlineMs: (k?.drainDeadlineSeconds ?? config.drain.deadlineSeconds) * 1000,
    captureLogs: k?.captureLogs ?? false,
    capacityFirst: k?.capacityFirst ?? config.replacement.capacityFirst,
    onNoCapacity: k?.onNoCapacity ?? config.replacement.onNoCapacity,
    actionSource: override ? "reason-override" : k?.action !== undefined ? "policy" : "catalog",
    requestedBy: { username: r.requestedBy, request: requestRef(r) }
  }
}

/** The request in words: who asked, which request, and why. */
export const requestText = (r: RequestView): string =>
  `requested by ${r.requestedBy} (RepairRequest ${requestRef(r)})${r.message !== "" ? `: ${r.message}` : ""}`.slice(
    0,
    500
  )

/** The request that governs a node's decision: the oldest still open (its due time is the earliest). */
export const governingRequest = (open: ReadonlyArray<RequestView>): RequestView | undefined =>
  [...open].sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name))[0]
