// The chart's FlowSchema (deploy/controller/flowschema.yaml, ADR 0020) against the real API server: a Lease request
// of the controller's service account is classified into the built-in `leader-election` priority level, and its
// other requests are not. API Priority and Fairness names the schema and level it chose in every response's
// X-Kubernetes-PF-FlowSchema-UID / -PriorityLevel-UID headers. The schema is rendered for this run's namespace,
// under a name of this run, so nothing installed is touched.
import { readFileSync } from "node:fs"
import { request } from "node:https"
import { clients, createTestNamespace, deleteNamespace, uniqueName } from "@nodemend/cluster-harness"
import { FlowcontrolApiserverV1Api, RbacAuthorizationV1Api, VersionApi } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AWS_REQUIRED_VALUES, find, render } from "../../src/index.ts"

const { kc, core } = clients()
const flow = kc.makeApiClient(FlowcontrolApiserverV1Api)
const rbac = kc.makeApiClient(RbacAuthorizationV1Api)
let namespace = ""
const schemaName = uniqueName("lease-fs")

beforeAll(async () => {
  namespace = await createTestNamespace(core, "apf")
})
afterAll(async () => {
  await flow.deleteFlowSchema({ name: schemaName }).catch(() => undefined)
  if (namespace) await deleteNamespace(core, namespace)
})

/** GET `path` as `token`; the APF headers of the answer (its status does not matter: APF classifies first). */
const pfHeaders = (path: string, token: string) => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error("no current cluster in the kubeconfig")
  const url = new URL(cluster.server)
  const ca = cluster.caData ? Buffer.from(cluster.caData, "base64") : readFileSync(cluster.caFile ?? "")
  return new Promise<{ status: number; flowSchema: string; level: string }>((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, ca, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume()
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            flowSchema: String(res.headers["x-kubernetes-pf-flowschema-uid"] ?? ""),
            level: String(res.headers["x-kubernetes-pf-prioritylevel-uid"] ?? "")
          })
        )
      }
    )
    req.on("error", reject)
    req.end()
  })
}

describe("the controller's Lease FlowSchema", () => {
  it("puts the controller's Lease requests in the leader-election priority level, and only those", async () => {
    const kubeVersion = (await kc.makeApiClient(VersionApi).getCode()).gitVersion
    const chart = render({ values: AWS_REQUIRED_VALUES, namespace, kubeVersion })
    const schema = find(chart, "FlowSchema", "nodemend-controller-leader-election") as unknown as {
      metadata: { name: string }
      spec: { rules: { subjects: { serviceAccount: { name: string; namespace: string } }[] }[] }
    }
    expect(schema.spec.rules[0]?.subjects[0]?.serviceAccount).toEqual({
      name: "nodemend-controller",
      namespace
    })
    const created = await flow.createFlowSchema({
      body: { ...schema, metadata: { ...schema.metadata, name: schemaName } } as never
    })
    const leaderElection = await flow.readPriorityLevelConfiguration({ name: "leader-election" })

    await core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: "nodemend-controller" } }
    })
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "lease-reader" },
        rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"] }]
      }
    })
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "lease-reader" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lease-reader" },
        subjects: [{ kind: "ServiceAccount", name: "nodemend-controller", namespace }]
      }
    })
    const token = (
      await core.createNamespacedServiceAccountToken({
        name: "nodemend-controller",
        namespace,
        body: { spec: { expirationSeconds: 600 } }
      })
    ).status?.token
    if (token === undefined) throw new Error("no token")

    const lease = await pfHeaders(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/nodemend-controller`,
      token
    )
    expect(lease.status).toBe(404)
    expect(lease.flowSchema).toBe(created.metadata?.uid)
    expect(lease.level).toBe(leaderElection.metadata?.uid)
    // Its other requests stay where the API server puts a service account's (they are the load).
    const pods = await pfHeaders(`/api/v1/namespaces/${namespace}/pods`, token)
    expect(pods.flowSchema).not.toBe(created.metadata?.uid)
    expect(pods.level).not.toBe(leaderElection.metadata?.uid)
  })
})
