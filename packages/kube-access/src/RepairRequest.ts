/**
 * The RepairRequest custom resource (`repairrequests.nodemend.io/v1alpha1`, namespaced, in the repair controller's
 * namespace): a person's or a workload's request to repair one node (`kubectl nodemend repair`, ADR 0020). The API
 * types shared by the repair controller (which decides it) and the kubectl plugin (which creates it). The YAML the
 * API server validates is deploy/crds/repairrequests.nodemend.io.yaml; the admission policy that proves
 * `spec.requestedBy` is `REPAIR_REQUEST_POLICY` (deploy/controller/admission-policy.yaml).
 */
import { Schema } from "effect"

export const REPAIR_REQUEST_GROUP = "nodemend.io"
export const REPAIR_REQUEST_VERSION = "v1alpha1"
export const REPAIR_REQUEST_PLURAL = "repairrequests"
export const REPAIR_REQUEST_KIND = "RepairRequest"
export const REPAIR_REQUEST_API_VERSION = `${REPAIR_REQUEST_GROUP}/${REPAIR_REQUEST_VERSION}`

/** The ValidatingAdmissionPolicy (and its binding, same name) that makes `spec.requestedBy` the creator's own. */
export const REPAIR_REQUEST_POLICY = "nodemend-repair-requests"

/** The ClusterRole that grants asking for repairs (bound per namespace by an administrator; never to nodes). */
export const REPAIR_REQUESTER_ROLE = "nodemend-repair-requester"

/** The collection's API path in a namespace; the object `n` is `repairRequestPath(ns, n)`. */
export const repairRequestsPath = (namespace: string): string =>
  `/apis/${REPAIR_REQUEST_API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${REPAIR_REQUEST_PLURAL}`
export const repairRequestPath = (namespace: string, name: string): string =>
  `${repairRequestsPath(namespace)}/${encodeURIComponent(name)}`

export const REQUEST_PHASES = ["Accepted", "Held", "Started", "Done", "Refused"] as const
export type RequestPhase = (typeof REQUEST_PHASES)[number]

export const RepairRequestSpec = Schema.Struct({
  nodeName: Schema.String.check(Schema.isNonEmpty()),
  reason: Schema.String.check(Schema.isNonEmpty()),
  message: Schema.optionalKey(Schema.String),
  requestedBy: Schema.Struct({ username: Schema.String.check(Schema.isNonEmpty()) })
})
export type RepairRequestSpec = typeof RepairRequestSpec.Type

export const RepairRequestStatus = Schema.Struct({
  phase: Schema.optionalKey(Schema.Literals(REQUEST_PHASES)),
  reason: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  repairId: Schema.optionalKey(Schema.String),
  outcome: Schema.optionalKey(Schema.String),
  lastTransitionTime: Schema.optionalKey(Schema.String)
})
export type RepairRequestStatus = typeof RepairRequestStatus.Type

export const RepairRequest = Schema.Struct({
  metadata: Schema.Struct({
    name: Schema.String,
    namespace: Schema.String,
    uid: Schema.String,
    creationTimestamp: Schema.String,
    resourceVersion: Schema.optionalKey(Schema.String)
  }),
  spec: RepairRequestSpec,
  status: Schema.optionalKey(RepairRequestStatus)
})
export type RepairRequest = typeof RepairRequest.Type
export const decodeRepairRequest = Schema.decodeUnknownResult(RepairRequest)

/** Phases after which the controller decides nothing more for a request. */
export const isSettled = (phase: RequestPhase | undefined): boolean =>
  phase === "Started" || phase === "Done" || phase === "Refused"
