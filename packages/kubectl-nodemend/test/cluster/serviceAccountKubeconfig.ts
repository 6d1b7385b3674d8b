// A kubeconfig for a ServiceAccount of the test's namespace that may only do `verbs` on ConfigMaps there: what an
// operator with narrow rights runs the plugin as (the plugin's permission checks, its read-only views).
import { readFile, writeFile } from "node:fs/promises"
import type { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node"

export interface ServiceAccountKubeconfig {
  readonly path: string
  /** The user the API server names in its answers and audit. */
  readonly user: string
}

export const serviceAccountKubeconfig = async (
  api: { readonly kc: KubeConfig; readonly core: CoreV1Api; readonly rbac: RbacAuthorizationV1Api },
  namespace: string,
  sa: string,
  configMapVerbs: ReadonlyArray<string>,
  path: string
): Promise<ServiceAccountKubeconfig> => {
  const { kc, core, rbac } = api
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: sa } } })
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: sa },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: [...configMapVerbs] }]
    }
  })
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: sa },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: sa },
      subjects: [{ kind: "ServiceAccount", name: sa, namespace }]
    }
  })
  const token = (
    await core.createNamespacedServiceAccountToken({
      namespace,
      name: sa,
      body: { spec: { audiences: [], expirationSeconds: 600 } }
    })
  ).status?.token
  const cluster = kc.getCurrentCluster()
  const ca =
    cluster?.caData ?? (cluster?.caFile ? (await readFile(cluster.caFile)).toString("base64") : undefined)
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: cluster?.server, "certificate-authority-data": ca } }],
      users: [{ name: "u", user: { token } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      "current-context": "c"
    })
  )
  return { path, user: `system:serviceaccount:${namespace}:${sa}` }
}
