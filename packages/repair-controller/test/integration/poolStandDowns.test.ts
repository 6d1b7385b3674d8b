/**
 * The stand-downs on the Karpenter NodePool object (#38 part 6), next to the real Karpenter (kwok provider): the zone
 * breaker's stand-down and the zonal-shift stand-down are each one RepairStandDown Event on the NodePool of the
 * nodes they hold, however many nodes and reconciles are behind it, as the breaker's and the holds' are
 * (karpenter.test.ts).
 */
import {
  clients,
  createNodePool,
  createTestNamespace,
  deleteNamespace,
  deleteNodePool,
  getNodePool,
  karpenterClients,
  karpenterNodePool,
  patchNodeCondition,
  provisionNodes,
  uniqueName,
  waitFor,
  waitForPoolNodes
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import { IT_LABEL, nodeEvents, sleep, testConfig, waitForEvent } from "./helpers.ts"

const { kc, core } = clients()
const { custom, apps } = karpenterClients(kc)
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []
const pools: string[] = []

const ZONE = "topology.kubernetes.io/zone"

/** A NodePool of `size` Nodes in `zone`, launched by Karpenter, labelled with the test's tag; its Nodes. */
const poolIn = async (tag: string, suffix: string, zone: string, size: number) => {
  const pool = `${tag}-${suffix}`
  pools.push(pool)
  await createNodePool(
    custom,
    karpenterNodePool(pool, {
      nodes: size + 3,
      labels: { [IT_LABEL]: tag },
      requirements: [
        { key: "kubernetes.io/os", operator: "In", values: ["linux"] },
        { key: "kubernetes.io/arch", operator: "In", values: ["amd64"] },
        { key: "karpenter.sh/capacity-type", operator: "In", values: ["on-demand"] },
        { key: "karpenter.kwok.sh/instance-family", operator: "In", values: ["c"] },
        { key: "karpenter.kwok.sh/instance-cpu", operator: "In", values: ["1"] },
        { key: ZONE, operator: "In", values: [zone] }
      ]
    })
  )
  await provisionNodes(apps, pool, size, { namespace: ns })
  const launched = await waitForPoolNodes(custom, core, pool, size)
  return { pool, nodes: launched.map((l) => l.node.metadata?.name ?? "").sort() }
}

/** The controller's config for every node labelled with `tag` (both pools of a test). */
const configFor = (tag: string, over: Record<string, unknown>) =>
  testConfig(
    ns,
    { tag, pool: tag, labels: {} },
    { nodeSelector: `${IT_LABEL}=${tag}`, maxInFlight: "100%", maxUnhealthyPercent: 100, ...over }
  )

const kernelFalse = (node: string) =>
  patchNodeCondition(core, node, {
    type: "KernelReady",
    status: "False",
    reason: "ForkFailedOutOfPIDs",
    message: "fork failed: out of PIDs (test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

const poolEvents = async (pool: string, reason: string) =>
  (
    await core.listNamespacedEvent({
      namespace: "default",
      fieldSelector: `involvedObject.kind=NodePool,involvedObject.name=${pool},reason=${reason}`
    })
  ).items

const waitForPoolEvent = (pool: string, reason: string) =>
  waitFor(
    `${reason} on the NodePool ${pool}`,
    async () => ((await poolEvents(pool, reason)).length > 0 ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 250 }
  )

beforeAll(async () => {
  ns = await createTestNamespace(core, "ctl-poolsd")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  for (const pool of pools)
    await deleteNodePool({ custom, apps, core }, pool, { deployment: { namespace: ns, name: pool } }).catch(
      () => {}
    )
  await deleteNamespace(core, ns)
}, 240_000)

describe.skipIf(process.env.NODEMEND_KARPENTER === "0")("stand-downs on the Karpenter NodePool", () => {
  it("the zone breaker: one RepairStandDown on the NodePool of the sick zone with the figures, none on the other", async () => {
    const tag = uniqueName("nm-zsd").slice(0, 30)
    const [a, b] = await Promise.all([poolIn(tag, "a", "test-zone-a", 3), poolIn(tag, "b", "test-zone-b", 3)])
    running.push(
      await startControllerProcess(
        kubeconfig,
        configFor(tag, { zoneBreaker: { maxUnhealthyPercent: 20, minUnhealthyNodes: 2 } })
      )
    )
    // Zone a: 2 of 3 unhealthy (67%); zone b: none.
    await Promise.all(a.nodes.slice(0, 2).map(kernelFalse))
    await Promise.all(a.nodes.slice(0, 2).map((n) => waitForEvent(core, n, "RepairStandDown", 60_000)))
    await waitForPoolEvent(a.pool, "RepairStandDown")
    // Several requeues (breaker.requeueSeconds 2) of both nodes later: still the one Event.
    await sleep(8000)
    const events = await poolEvents(a.pool, "RepairStandDown")
    expect(events).toHaveLength(1)
    const np = await getNodePool(custom, a.pool)
    expect(events[0]?.involvedObject?.uid).toBe(np?.metadata?.uid)
    expect(events[0]?.type).toBe("Warning")
    expect(events[0]?.reportingComponent).toBe("nodemend.io/repair-controller")
    expect(events[0]?.message).toBe(
      "repairs of nodes of this NodePool stand down: zone test-zone-a has 2 of 3 nodes unhealthy (66.7%, over 20%) while test-zone-b has 0 of 3 (0%): the zone, not the nodes, looks at fault; repairs in it stand down"
    )
    expect(await poolEvents(b.pool, "RepairStandDown")).toEqual([])
    for (const n of a.nodes.slice(0, 2)) expect(await nodeEvents(core, n, "RepairStarted")).toEqual([])
  }, 240_000)

  it("a zonal shift: one RepairStandDown on the NodePool naming the shifted zone and what lifts it", async () => {
    const tag = uniqueName("nm-zsh").slice(0, 30)
    const a = await poolIn(tag, "a", "test-zone-a", 2)
    const expiresAt = new Date(Date.now() + 3600_000).toISOString()
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: `shifts-${tag}` },
        data: {
          shifts: JSON.stringify([{ kind: "zonal-shift", zone: "test-zone-a", expiresAt, id: "zs-1" }])
        }
      }
    })
    running.push(
      await startControllerProcess(
        kubeconfig,
        configFor(tag, { zonalShift: { refreshSeconds: 1, scope: "zone" } })
      )
    )
    await Promise.all(a.nodes.map(kernelFalse))
    await Promise.all(a.nodes.map((n) => waitForEvent(core, n, "RepairStandDown", 60_000)))
    await waitForPoolEvent(a.pool, "RepairStandDown")
    // Requeued every refreshSeconds (1 s) for both nodes: still the one Event.
    await sleep(6000)
    const events = await poolEvents(a.pool, "RepairStandDown")
    expect(events).toHaveLength(1)
    expect(events[0]?.involvedObject?.uid).toBe((await getNodePool(custom, a.pool))?.metadata?.uid)
    expect(events[0]?.message).toBe(
      `repairs of this NodePool's nodes in test-zone-a stand down: a zonal shift moves traffic away from zone test-zone-a; it lifts when the shift expires at ${expiresAt}, or earlier when the shift is cancelled (zonal shift zs-1)`
    )
    for (const n of a.nodes) expect(await nodeEvents(core, n, "RepairStarted")).toEqual([])
  }, 240_000)
})
