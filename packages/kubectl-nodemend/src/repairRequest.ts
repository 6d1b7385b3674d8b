/**
 * `kubectl nodemend repair <node> --reason <code>` (issue #41 item 4, ADR 0020): a person's or a workload's request
 * to repair a node, as a RepairRequest in the repair controller's namespace. The caller's identity comes from a
 * SelfSubjectReview (authentication.k8s.io/v1): the admission policy nodemend-repair-requests refuses any other
 * requestedBy, so what this writes is what the API server proved. The controller decides the request through its
 * gates and writes its status (Accepted, Held with what lifts it, Started, Done, Refused), which this prints.
 */
import type { KubeHttp } from "@nodemend/kube-access"
import {
  decodeRepairRequest,
  REPAIR_REQUEST_API_VERSION,
  REPAIR_REQUEST_KIND,
  type RepairRequest,
  repairRequestPath,
  repairRequestsPath
} from "@nodemend/kube-access/RepairRequest"
import { MANUAL_REPAIR_REASON, resolveReason } from "@nodemend/reason-codes"
import { Result } from "effect"
import { PluginError } from "./errors.ts"
import { call } from "./repairActions.ts"

export interface RepairRequestOptions {
  readonly node: string
  readonly reason: string
  readonly message?: string
  /** Wait until the repair is done or refused (else until the controller's first answer, at most FIRST_ANSWER_MS). */
  readonly wait: boolean
  readonly timeoutMs: number
  readonly controllerNamespace: string
}

/** How long `repair` without --wait waits for the controller's first answer before it leaves the request to it. */
export const FIRST_ANSWER_MS = 15_000

/** Who the API server says the caller is (SelfSubjectReview: no RBAC needed, every authenticated user may ask). */
export const whoAmI = async (kube: KubeHttp): Promise<string> => {
  const r = await call<{ status?: { userInfo?: { username?: string } } }>(
    kube,
    "whoAmI",
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
  )
  const username = r.status?.userInfo?.username
  if (!username) throw new PluginError("the API server did not say who you are (SelfSubjectReview)")
  return username
}

/** A reason a request may name: a catalog reason code or ManualRepairRequested (the controller checks it again). */
export const checkReason = (reason: string): void => {
  if (reason !== MANUAL_REPAIR_REASON && resolveReason(reason) === undefined)
    throw new PluginError(
      `--reason ${reason} is no reason code of @nodemend/reason-codes (docs/reason-codes.md); use ${MANUAL_REPAIR_REASON} for a repair no code names`
    )
}

/** The request's body: named after the node (the API server adds a suffix), asked by `username`. */
export const requestBody = (o: RepairRequestOptions, username: string) => ({
  apiVersion: REPAIR_REQUEST_API_VERSION,
  kind: REPAIR_REQUEST_KIND,
  metadata: { generateName: `${o.node.slice(0, 200).toLowerCase()}-` },
  spec: {
    nodeName: o.node,
    reason: o.reason,
    ...(o.message !== undefined && o.message !== "" ? { message: o.message } : {}),
    requestedBy: { username }
  }
})

/** One line of the request's status, as it changes. */
export const statusLine = (r: RepairRequest): string => {
  const s = r.status
  if (s?.phase === undefined) return "Pending: the controller has not answered yet"
  const repair = s.repairId !== undefined ? ` [repair ${s.repairId}]` : ""
  return `${s.phase}${s.reason !== undefined ? ` (${s.reason})` : ""}${repair}: ${s.message ?? ""}`
}

const settled = (r: RepairRequest, wait: boolean) => {
  const phase = r.status?.phase
  return wait ? phase === "Done" || phase === "Refused" : phase !== undefined
}

/** The exit code for the last status seen: 0 unless the request was refused or its repair failed. */
export const exitCodeOf = (r: RepairRequest): number =>
  r.status?.phase === "Refused" || r.status?.outcome === "Failed" ? 1 : 0

const read = async (kube: KubeHttp, ns: string, name: string): Promise<RepairRequest> => {
  const d = decodeRepairRequest(await call(kube, "readRepairRequest", "GET", repairRequestPath(ns, name)))
  if (Result.isFailure(d))
    throw new PluginError(`RepairRequest ${ns}/${name} cannot be read: ${String(d.failure)}`)
  return d.success
}

export const repairRequestCommand = async (
  kube: KubeHttp,
  o: RepairRequestOptions,
  out: (line: string) => void
): Promise<number> => {
  checkReason(o.reason)
  const username = await whoAmI(kube)
  const ns = o.controllerNamespace
  const created = decodeRepairRequest(
    await call(kube, "createRepairRequest", "POST", repairRequestsPath(ns), requestBody(o, username))
  )
  if (Result.isFailure(created)) throw new PluginError(`the API server's answer is no RepairRequest`)
  const name = created.success.metadata.name
  out(`repairrequest ${ns}/${name} created: repair ${o.node} for ${o.reason}, requested by ${username}`)
  const deadline = Date.now() + (o.wait ? o.timeoutMs : Math.min(o.timeoutMs, FIRST_ANSWER_MS))
  let last = ""
  let r = created.success
  for (;;) {
    const line = statusLine(r)
    if (line !== last) out(line)
    last = line
    if (settled(r, o.wait)) return exitCodeOf(r)
    if (Date.now() > deadline) {
      out(
        `still ${r.status?.phase ?? "Pending"}; follow it with: kubectl get repairrequest -n ${ns} ${name} -o wide`
      )
      return o.wait ? 1 : 0
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
    r = await read(kube, ns, name)
  }
}
