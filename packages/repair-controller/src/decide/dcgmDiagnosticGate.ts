/**
 * The replacement health gate's last check on a pool that asks for it (`pools.<p>.replacementDiagnostic`, ADR
 * 0019): DCGM's active diagnostic, run by the replacement's own agent through a NodeDiagnostic named after it. Pure:
 * the object as read (or none) and the time in, the next step out. The object is this repair's only when the
 * controller labelled it with the repair's id and asked for the level the record fixed; anything else (a user's
 * log capture, an earlier repair's request) is replaced by a fresh request. The pool's bound counts from the
 * object's creationTimestamp, which the API server sets (a node cannot write it, contract 8).
 */
import { dcgmDiagnosticCompleted, type NodeDiagnostic } from "@nodemend/kube-access/NodeDiagnostic"
import type { HealthExpectations } from "./replacementHealth.ts"

/** The label on the NodeDiagnostic the gate creates: which repair asked. */
export const REPAIR_ID_LABEL = "nodemend.io/repair-id"

export type DiagnosticAsk = NonNullable<HealthExpectations["dcgmDiagnostic"]>

export type DiagnosticStep =
  /** No request of this repair at this level: create one (replacing whatever object is there). */
  | { readonly _tag: "Request" }
  | { readonly _tag: "Waiting"; readonly why: string }
  | { readonly _tag: "Passed" }
  | { readonly _tag: "Failed"; readonly why: string }

/** The agent's words are the node's: kept short in the Event and the record. */
const MESSAGE_MAX = 400
const short = (s: string) => (s.length > MESSAGE_MAX ? `${s.slice(0, MESSAGE_MAX)}…` : s)

export const dcgmDiagnosticStep = (
  nd: NodeDiagnostic | undefined,
  ask: DiagnosticAsk,
  repairId: string,
  now: number
): DiagnosticStep => {
  if (
    nd === undefined ||
    nd.metadata.labels?.[REPAIR_ID_LABEL] !== repairId ||
    nd.spec?.dcgmDiagnostic?.level !== ask.level
  )
    return { _tag: "Request" }
  const level = `DCGM diagnostic level ${ask.level}`
  const done = dcgmDiagnosticCompleted(nd)
  if (done !== undefined && done.level === ask.level)
    switch (done.result) {
      case "Pass":
        return { _tag: "Passed" }
      case "Fail":
        return { _tag: "Failed", why: `${short(done.message)} (${level})` }
      case "NotAvailable":
        // A pool that asked for the diagnostic fails closed on a node that cannot run it (contract 7).
        return { _tag: "Failed", why: `not available on the node: ${short(done.message)} (${level})` }
    }
  const created = Date.parse(nd.metadata.creationTimestamp ?? "")
  if (Number.isFinite(created) && now - created >= ask.timeoutSeconds * 1000)
    return {
      _tag: "Failed",
      why: `no result from the node's agent within ${ask.timeoutSeconds}s (${level})`
    }
  return nd.status?.dcgmDiagnostic?.running !== undefined
    ? { _tag: "Waiting", why: `its agent is running ${level}` }
    : { _tag: "Waiting", why: `asked its agent for ${level}` }
}
