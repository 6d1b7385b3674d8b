/**
 * What the RepairRequest cluster tests set up as the chart would: the CRD (deploy/crds), the admission policy and
 * binding that prove who asked and the requester ClusterRole (deploy/controller), each installed only when absent
 * (cluster-wide objects other runs may share, identical to what ships); a workload's identity (a ServiceAccount
 * bound to nodemend-repair-requester in the controller's namespace) and a client acting as it.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  type CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  loadAllYaml,
  loadYaml,
  RbacAuthorizationV1Api,
  type V1ClusterRole,
  type V1CustomResourceDefinition,
  type V1ValidatingAdmissionPolicy,
  type V1ValidatingAdmissionPolicyBinding
} from "@kubernetes/client-node"
import { waitFor } from "@nodemend/cluster-harness"

const deploy = (path: string) => fileURLToPath(new URL(`../../../../deploy/${path}`, import.meta.url))
export const RR = { group: "nodemend.io", version: "v1alpha1", plural: "repairrequests" } as const
const POLICY = "nodemend-repair-requests"

const ignoreConflict = (e: unknown) => {
  if ((e as { code?: number }).code !== 409) throw e
  return false
}

export const installRepairRequestCrd = async (kc: KubeConfig, namespace: string) => {
  const api = kc.makeApiClient(ApiextensionsV1Api)
  const crd = loadYaml<V1CustomResourceDefinition>(
    readFileSync(deploy("crds/repairrequests.nodemend.io.yaml"), "utf8")
  )
  const name = crd.metadata?.name ?? ""
  const created = await api.createCustomResourceDefinition({ body: crd }).then(() => true, ignoreConflict)
  if (!created) {
    const current = await api.readCustomResourceDefinition({ name })
    await api.replaceCustomResourceDefinition({
      name,
      body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } }
    })
  }
  const custom = kc.makeApiClient(CustomObjectsApi)
  await waitFor(
    "repairrequests served",
    () =>
      custom.listNamespacedCustomObject({ ...RR, namespace }).then(
        () => true,
        () => false
      ),
    { timeoutMs: 30_000 }
  )
}

/** The shipped policy, binding and requester role, where absent; true when this call created the policy. */
export const installShippedPolicy = async (kc: KubeConfig): Promise<boolean> => {
  const policies = loadAllYaml(readFileSync(deploy("controller/admission-policy.yaml"), "utf8")) as Array<{
    kind: string
    metadata: { name: string }
  }>
  const pick = <T>(kind: string) => policies.find((o) => o.kind === kind && o.metadata.name === POLICY) as T
  const adm = kc.makeApiClient(AdmissionregistrationV1Api)
  const created = await adm
    .createValidatingAdmissionPolicy({ body: pick<V1ValidatingAdmissionPolicy>("ValidatingAdmissionPolicy") })
    .then(() => true, ignoreConflict)
  await adm
    .createValidatingAdmissionPolicyBinding({
      body: pick<V1ValidatingAdmissionPolicyBinding>("ValidatingAdmissionPolicyBinding")
    })
    .catch(ignoreConflict)
  const rbac = loadAllYaml(readFileSync(deploy("controller/rbac.yaml"), "utf8")) as Array<{
    kind: string
    metadata: { name: string }
  }>
  const role = rbac.find((o) => o.kind === "ClusterRole" && o.metadata.name === "nodemend-repair-requester")
  await kc
    .makeApiClient(RbacAuthorizationV1Api)
    .createClusterRole({ body: role as V1ClusterRole })
    .catch(ignoreConflict)
  return created
}

export const removeShippedPolicy = async (kc: KubeConfig) => {
  const adm = kc.makeApiClient(AdmissionregistrationV1Api)
  await adm.deleteValidatingAdmissionPolicyBinding({ name: POLICY }).catch(() => undefined)
  await adm.deleteValidatingAdmissionPolicy({ name: POLICY }).catch(() => undefined)
}

/** A ServiceAccount granted nodemend-repair-requester in `namespace`, and a client acting as it. */
export const requester = async (kc: KubeConfig, core: CoreV1Api, namespace: string, name: string) => {
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } })
  await kc.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `${name}-requests` },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "nodemend-repair-requester"
      },
      subjects: [{ kind: "ServiceAccount", name, namespace }]
    }
  })
  const t = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } }
  })
  const cluster = kc.getCurrentCluster()
  if (cluster === null || !t.status?.token) throw new Error("no cluster or token")
  const as = new KubeConfig()
  as.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: t.status.token }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name
  })
  return { kc: as, username: `system:serviceaccount:${namespace}:${name}` }
}

export interface RequestBody {
  readonly nodeName: string
  readonly reason: string
  readonly message?: string
  readonly requestedBy: string
}

export const createRequest = (kc: KubeConfig, namespace: string, name: string, b: RequestBody) =>
  kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...RR,
    namespace,
    body: {
      apiVersion: "nodemend.io/v1alpha1",
      kind: "RepairRequest",
      metadata: { name },
      spec: {
        nodeName: b.nodeName,
        reason: b.reason,
        ...(b.message !== undefined ? { message: b.message } : {}),
        requestedBy: { username: b.requestedBy }
      }
    }
  })

export interface RequestStatus {
  readonly phase?: string
  readonly reason?: string
  readonly message?: string
  readonly repairId?: string
  readonly outcome?: string
}

export const requestStatus = async (
  kc: KubeConfig,
  namespace: string,
  name: string
): Promise<RequestStatus> => {
  const o = (await kc
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...RR, namespace, name })) as {
    status?: RequestStatus
  }
  return o.status ?? {}
}

export const waitForPhase = (
  kc: KubeConfig,
  namespace: string,
  name: string,
  phase: string,
  timeoutMs = 60_000
) =>
  waitFor(
    `RepairRequest ${name} ${phase}`,
    async (seen) => {
      const s = await requestStatus(kc, namespace, name)
      seen(s)
      return s.phase === phase ? s : undefined
    },
    { timeoutMs, intervalMs: 250 }
  )
