/**
 * Whether the admission policy that proves a RepairRequest's `spec.requestedBy` is in force (ADR 0020): the
 * ValidatingAdmissionPolicy and its binding as the API server answered them. Pure. In force means: the policy
 * fails closed (failurePolicy Fail), holds the username rule, and its binding denies (validationActions Deny) for
 * every namespace (no matchResources narrowing it, no params). Anything else is Absent, with why: the controller then
 * refuses every request (contract 7: fail closed).
 */
import { REPAIR_REQUEST_POLICY } from "@nodemend/kube-access/RepairRequest"
import type { PolicyProof } from "../decide/repairRequest.ts"

interface Meta {
  readonly metadata?: { readonly creationTimestamp?: string; readonly deletionTimestamp?: string }
}
interface PolicyObject extends Meta {
  readonly spec?: {
    readonly failurePolicy?: string
    readonly validations?: ReadonlyArray<{ readonly expression?: string }>
  }
}
interface BindingObject extends Meta {
  readonly spec?: {
    readonly policyName?: string
    readonly validationActions?: ReadonlyArray<string>
    readonly matchResources?: unknown
    readonly paramRef?: unknown
  }
}

/** The rule the policy must hold: the creator's username is the request's `requestedBy.username`. */
const USERNAME_RULE = /requestedBy[^=]*username[^=]*==\s*request\.userInfo\.username/u

const createdAt = (o: Meta): number | undefined => {
  const t = Date.parse(o.metadata?.creationTimestamp ?? "")
  return Number.isNaN(t) || o.metadata?.deletionTimestamp !== undefined ? undefined : t
}

export const policyProofOf = (policy: unknown, binding: unknown): PolicyProof => {
  const name = REPAIR_REQUEST_POLICY
  if (policy === undefined)
    return { _tag: "Absent", why: `ValidatingAdmissionPolicy ${name} is not installed` }
  if (binding === undefined)
    return { _tag: "Absent", why: `ValidatingAdmissionPolicyBinding ${name} is not installed` }
  const p = policy as PolicyObject
  const b = binding as BindingObject
  if ((p.spec?.failurePolicy ?? "Fail") !== "Fail")
    return {
      _tag: "Absent",
      why: `policy ${name} does not fail closed (failurePolicy ${p.spec?.failurePolicy})`
    }
  if (!(p.spec?.validations ?? []).some((v) => USERNAME_RULE.test(v.expression ?? "")))
    return { _tag: "Absent", why: `policy ${name} does not hold the requestedBy.username rule` }
  if (b.spec?.policyName !== name)
    return { _tag: "Absent", why: `binding ${name} binds ${b.spec?.policyName ?? "no policy"}, not ${name}` }
  if (!(b.spec?.validationActions ?? []).includes("Deny"))
    return { _tag: "Absent", why: `binding ${name} does not deny (validationActions without Deny)` }
  if (b.spec?.matchResources !== undefined || b.spec?.paramRef !== undefined)
    return { _tag: "Absent", why: `binding ${name} is narrowed (matchResources or paramRef)` }
  const since = [createdAt(p), createdAt(b)]
  if (since.some((t) => t === undefined))
    return { _tag: "Absent", why: `policy ${name} or its binding is being deleted` }
  return { _tag: "InForce", since: Math.max(...(since as number[])) }
}
