// The plain manifests in deploy/ (crds, agent, controller) applied as they ship, on the real node, with the
// two edits docs/install.md asks of a local install: the kwok provider (no cloud here) and the controller
// pinned to the real node. Both workloads run from the same images as the chart's.
import type { KubeObject } from "../../src/index.ts"
import { loadManifests, makeApplyClient } from "../../src/index.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AGENT_NS, admin, CONTROLLER_NS, REAL_NODE, readyPods } from "./support.ts"

const api = makeApplyClient(admin().kc)
const applied: KubeObject[] = []

/** deploy/ as shipped, but for the local-install edits (kwok provider, controller on the real node). */
const localInstall = (): KubeObject[] =>
  [...loadManifests("crds"), ...loadManifests("agent"), ...loadManifests("controller")].map((o) => {
    if (o.kind === "ConfigMap" && o.metadata?.name === "nodemend-controller") {
      const data = o.data as Record<string, string>
      const file = data["controller.yaml"]!
      expect(file).toMatch(/^cloudProvider: aws\b/m)
      return {
        ...o,
        data: { ...data, "controller.yaml": file.replace(/^cloudProvider: aws\b/m, "cloudProvider: kwok") }
      }
    }
    if (o.kind === "Deployment" && o.metadata?.name === "nodemend-controller") {
      const spec = o.spec as { template: { spec: Record<string, unknown> } }
      return {
        ...o,
        spec: {
          ...spec,
          template: {
            ...spec.template,
            spec: { ...spec.template.spec, nodeSelector: { "nodemend.io/real-node": "true" } }
          }
        }
      }
    }
    return o
  })

beforeAll(async () => {
  for (const o of localInstall()) applied.push(await api.apply(o))
}, 120_000)
afterAll(async () => {
  // The Namespace stays (deleting it takes a while; the chart test's install creates it again).
  for (const o of [...applied].reverse().filter((x) => x.kind !== "Namespace"))
    await api.remove(o).catch(() => undefined)
  await admin()
    .leases.deleteNamespacedLease({ name: "nodemend-controller", namespace: CONTROLLER_NS })
    .catch(() => undefined)
}, 180_000)

describe("deploy/ applied as shipped", () => {
  it("runs the controller's two replicas and the agent on the real node, from the images npm run images built", async () => {
    const controllers = await readyPods(CONTROLLER_NS, "nodemend-controller", 2)
    const [agent] = await readyPods(AGENT_NS, "nodemend-agent", 1)
    expect([...controllers, agent!].map((p) => p.spec?.nodeName)).toEqual([REAL_NODE, REAL_NODE, REAL_NODE])
    expect(controllers.map((p) => p.spec?.containers[0]?.image)).toEqual([
      "ghcr.io/nodemend/controller:0.1.0",
      "ghcr.io/nodemend/controller:0.1.0"
    ])
    expect(agent!.spec?.containers[0]?.image).toBe("ghcr.io/nodemend/agent:0.1.0")
  })
})
