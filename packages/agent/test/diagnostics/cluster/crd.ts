// Installs deploy/crds/nodediagnostics.nodemend.io.yaml through the apiextensions API and waits until it is
// Established. Shared by the diagnostics cluster tests of agent, repair-controller and kubectl-nodemend.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  type KubeConfig,
  loadYaml,
  type V1CustomResourceDefinition
} from "@kubernetes/client-node"

export const CRD_PATH = fileURLToPath(
  new URL("../../../../../deploy/crds/nodediagnostics.nodemend.io.yaml", import.meta.url)
)

export const installNodeDiagnosticCrd = async (kc: KubeConfig): Promise<void> => {
  const api = kc.makeApiClient(ApiextensionsV1Api)
  const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(CRD_PATH, "utf8"))
  const name = crd.metadata?.name ?? ""
  try {
    await api.createCustomResourceDefinition({ body: crd })
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e
    // Already there (another test file, or an earlier run): bring it up to date.
    const current = await api.readCustomResourceDefinition({ name })
    await api.replaceCustomResourceDefinition({
      name,
      body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } }
    })
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    const c = await api.readCustomResourceDefinition({ name })
    if (c.status?.conditions?.some((x) => x.type === "Established" && x.status === "True")) break
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established`)
    await new Promise((r) => setTimeout(r, 200))
  }
  // Established can precede the resource being served; wait until a list answers.
  const custom = kc.makeApiClient(CustomObjectsApi)
  const [group, version, plural] = [crd.spec.group, crd.spec.versions[0]!.name, crd.spec.names.plural]
  for (;;) {
    const ok = await custom.listClusterCustomObject({ group, version, plural }).then(
      () => true,
      () => false
    )
    if (ok) return
    if (Date.now() > deadline) throw new Error(`CRD ${name} Established but ${plural} is not served`)
    await new Promise((r) => setTimeout(r, 200))
  }
}
