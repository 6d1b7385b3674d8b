// The agent's RBAC as the chart renders it, created for real (renamed to this run) and asked through
// SubjectAccessReviews: the agent's service account may do exactly what the agent does (GET its Node, patch
// Node status, write Events in `default`, watch NodeDiagnostics and patch their status) and nothing broader
// (no listing or watching Nodes, no patching the Node object, no Events elsewhere).
import { clients, createTestNamespace, deleteNamespace } from "@nodemend/cluster-harness"
import {
  AuthorizationV1Api,
  RbacAuthorizationV1Api,
  type V1ClusterRole,
  type V1ClusterRoleBinding,
  type V1ResourceAttributes,
  type V1Role,
  type V1RoleBinding
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { find, render } from "../../src/index.ts"

const { kc, core } = clients()
const rbac = kc.makeApiClient(RbacAuthorizationV1Api)
const authz = kc.makeApiClient(AuthorizationV1Api)
let namespace = ""
let suffix = ""

/** An object of the render under a name of this run (cluster-scoped names must not collide). */
const renamed = <T>(o: unknown, name: string): T => {
  const c = structuredClone(o) as { metadata: Record<string, unknown> }
  c.metadata = { ...c.metadata, name }
  return c as T
}

beforeAll(async () => {
  namespace = await createTestNamespace(core, "rbac")
  suffix = namespace
  const objects = render({ namespace, values: { controller: { enabled: false }, agent: { namespace } } })
  await core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: "nodemend-agent", namespace } }
  })
  const clusterRole = renamed<V1ClusterRole>(
    find(objects, "ClusterRole", "nodemend-agent"),
    `nodemend-agent-${suffix}`
  )
  const binding = renamed<V1ClusterRoleBinding>(
    find(objects, "ClusterRoleBinding", "nodemend-agent"),
    `nodemend-agent-${suffix}`
  )
  binding.roleRef = { ...binding.roleRef, name: `nodemend-agent-${suffix}` }
  const role = renamed<V1Role>(
    find(objects, "Role", "nodemend-agent-events"),
    `nodemend-agent-events-${suffix}`
  )
  const roleBinding = renamed<V1RoleBinding>(
    find(objects, "RoleBinding", "nodemend-agent-events"),
    `nodemend-agent-events-${suffix}`
  )
  roleBinding.roleRef = { ...roleBinding.roleRef, name: `nodemend-agent-events-${suffix}` }
  await rbac.createClusterRole({ body: clusterRole })
  await rbac.createClusterRoleBinding({ body: binding })
  await rbac.createNamespacedRole({ namespace: "default", body: role })
  await rbac.createNamespacedRoleBinding({ namespace: "default", body: roleBinding })
})

afterAll(async () => {
  if (!suffix) return
  const ignore = () => undefined
  await rbac.deleteClusterRoleBinding({ name: `nodemend-agent-${suffix}` }).catch(ignore)
  await rbac.deleteClusterRole({ name: `nodemend-agent-${suffix}` }).catch(ignore)
  await rbac
    .deleteNamespacedRoleBinding({ namespace: "default", name: `nodemend-agent-events-${suffix}` })
    .catch(ignore)
  await rbac
    .deleteNamespacedRole({ namespace: "default", name: `nodemend-agent-events-${suffix}` })
    .catch(ignore)
  await deleteNamespace(core, namespace)
})

const allowed = async (attributes: V1ResourceAttributes): Promise<boolean> => {
  const review = await authz.createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${namespace}:nodemend-agent`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
        resourceAttributes: attributes
      }
    }
  })
  return review.status?.allowed === true
}

describe("agent RBAC (chart render) against the real authorizer", () => {
  it("allows what the agent does", async () => {
    const node = { resource: "nodes", name: "ip-10-0-1-5.ec2.internal" }
    // the authorizer sees new bindings through its informer: wait for the first grant
    const deadline = Date.now() + 15_000
    while (!(await allowed({ ...node, verb: "get" }))) {
      if (Date.now() > deadline) throw new Error("the agent's role was never granted")
      await new Promise((r) => setTimeout(r, 100))
    }
    const wanted: V1ResourceAttributes[] = [
      { ...node, verb: "get" },
      { ...node, subresource: "status", verb: "patch" },
      { group: "events.k8s.io", resource: "events", namespace: "default", verb: "create" },
      { group: "events.k8s.io", resource: "events", namespace: "default", verb: "patch", name: "n.1" },
      { group: "nodemend.io", resource: "nodediagnostics", verb: "list" },
      { group: "nodemend.io", resource: "nodediagnostics", verb: "watch" },
      { group: "nodemend.io", resource: "nodediagnostics", subresource: "status", verb: "patch", name: "n" }
    ]
    for (const a of wanted) expect(await allowed(a), JSON.stringify(a)).toBe(true)
  })

  it("refuses anything broader", async () => {
    const refused: V1ResourceAttributes[] = [
      { resource: "nodes", verb: "list" },
      { resource: "nodes", verb: "watch" },
      { resource: "nodes", name: "n", verb: "patch" },
      { resource: "nodes", name: "n", verb: "delete" },
      { group: "events.k8s.io", resource: "events", namespace: "kube-system", verb: "create" },
      { group: "events.k8s.io", resource: "events", namespace: "default", verb: "delete", name: "n.1" },
      { resource: "pods", namespace: "default", verb: "list" },
      { resource: "secrets", namespace: "kube-system", verb: "get", name: "x" }
    ]
    for (const a of refused) expect(await allowed(a), JSON.stringify(a)).toBe(false)
  })
})
