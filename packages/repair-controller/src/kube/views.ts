/** Node / Pod (wire JSON) -> the plain views the pure core reads. */
import type { ConditionView, NodeRef, NodeView } from "../domain/NodeView.ts"
import type { PodView } from "../domain/PodView.ts"
import type { Node, Pod } from "@nodemend/kube-access"

const toMs = (d: unknown): number | undefined => {
  if (d instanceof Date) return Number.isNaN(d.getTime()) ? undefined : d.getTime()
  if (typeof d === "string") {
    const t = Date.parse(d)
    return Number.isNaN(t) ? undefined : t
  }
  return undefined
}

export const nodeView = (n: Node): NodeView => ({
  name: n.metadata?.name ?? "",
  ...(n.metadata?.uid !== undefined ? { uid: n.metadata.uid } : {}),
  ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
  labels: n.metadata?.labels ?? {},
  annotations: n.metadata?.annotations ?? {},
  conditions: (n.status?.conditions ?? []).map(
    (c): ConditionView => ({
      type: c.type,
      status: c.status,
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      ...(c.message !== undefined ? { message: c.message } : {}),
      ...(toMs(c.lastTransitionTime) !== undefined ? { lastTransitionTime: toMs(c.lastTransitionTime)! } : {})
    })
  ),
  deleting: n.metadata?.deletionTimestamp !== undefined && n.metadata.deletionTimestamp !== null,
  ...(toMs(n.metadata?.creationTimestamp) !== undefined
    ? { createdAt: toMs(n.metadata?.creationTimestamp)! }
    : {})
})

export const nodeRef = (n: {
  readonly name: string
  readonly providerID?: string | undefined
  readonly labels: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
}): NodeRef => ({
  name: n.name,
  providerID: n.providerID ?? "",
  labels: n.labels,
  annotations: n.annotations ?? {}
})

export const podView = (p: Pod): PodView => ({
  namespace: p.metadata?.namespace ?? "",
  name: p.metadata?.name ?? "",
  uid: p.metadata?.uid ?? "",
  ...(p.status?.phase !== undefined ? { phase: p.status.phase } : {}),
  ...(p.spec?.priorityClassName !== undefined ? { priorityClassName: p.spec.priorityClassName } : {}),
  ownerKinds: (p.metadata?.ownerReferences ?? []).map((o) => o.kind),
  mirror: p.metadata?.annotations?.["kubernetes.io/config.mirror"] !== undefined,
  tolerations: (p.spec?.tolerations ?? []).map((t) => ({
    ...(t.key !== undefined ? { key: t.key } : {}),
    ...(t.operator !== undefined ? { operator: t.operator } : {}),
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.effect !== undefined ? { effect: t.effect } : {})
  })),
  ...(toMs(p.metadata?.deletionTimestamp) !== undefined
    ? { deletingSince: toMs(p.metadata?.deletionTimestamp)! }
    : {})
})

/**
 * What a node update must change for the controller to look again: condition status, lastTransitionTime and
 * reason, the veto annotation, the pool and zone labels, providerID, deletion. Heartbeats change
 * none of these.
 */
export const nodeSignature = (n: Node, poolLabel: string): string => {
  const conds = (n.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}@${toMs(c.lastTransitionTime) ?? ""}#${c.reason ?? ""}`)
    .sort()
    .join(",")
  const a = n.metadata?.annotations ?? {}
  const ready = n.status?.conditions?.find((c) => c.type === "Ready")?.status ?? ""
  return [
    conds,
    a["nodemend.io/do-not-repair"] ?? "",
    n.metadata?.labels?.[poolLabel] ?? "",
    n.metadata?.labels?.["topology.kubernetes.io/zone"] ?? "",
    n.metadata?.labels?.["topology.k8s.aws/zone-id"] ?? "",
    n.spec?.providerID ?? "",
    n.metadata?.deletionTimestamp ? "deleting" : "",
    ready
  ].join("|")
}
