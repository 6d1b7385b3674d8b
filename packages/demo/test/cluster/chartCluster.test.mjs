// The demo runs its own controller and agents outside the cluster: on a cluster where the Helm chart's controller
// runs (a kind cluster brought up with the chart), it stops at once and says what to do, before it starts anything.
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AppsV1Api } from "@kubernetes/client-node"
import { clients, createTestNamespace, deleteNamespace } from "@nodemend/cluster-harness"
import { afterAll, expect, it } from "vitest"
import { startFleet } from "../../src/fleet.mjs"

const { core, kc } = clients()
const apps = kc.makeApiClient(AppsV1Api)
let namespace = ""
const dir = mkdtempSync(join(tmpdir(), "nodemend-demo-chart-"))
afterAll(async () => {
  if (namespace) {
    // Gone before the next file's fleet starts: a namespace's deletion leaves its Deployments for a while.
    await apps.deleteNamespacedDeployment({ name: "nodemend-controller", namespace }).catch(() => undefined)
    await deleteNamespace(core, namespace)
  }
  rmSync(dir, { recursive: true, force: true })
})

it("refuses a cluster where the chart's controller Deployment runs, naming it and the way out", async () => {
  namespace = await createTestNamespace(core, "chart")
  const labels = { "app.kubernetes.io/name": "nodemend-controller" }
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: "nodemend-controller", labels },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "controller" }] } }
      }
    }
  })
  await expect(startFleet({ dir, prefix: "chart-" })).rejects.toThrow(
    `the Helm chart's controller runs on this cluster (Deployment ${namespace}/nodemend-controller)`
  )
  // Nothing was started: no child process wrote a log.
  expect(readdirSync(join(dir, "logs"))).toEqual([])
})
