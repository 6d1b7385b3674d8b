// Issue #37 (contract 8, extended): no figure the controller computes can be steered by what a node writes about
// itself. The real controller with `cloudProvider: aws` against the fake cloud (instances are kwok Nodes), attacked
// with a node's own kubelet credentials (system:node:<name>; NodeRestriction lets it rewrite its pool and zone
// labels):
// - label churn: a healthy node relabels itself thousands of times; the shipped bundle (the Deployment's V8 flags)
//   keeps its /metrics and its RSS flat (before the fix: a series per value, 5.8 MB per scrape, +170 MB RSS);
// - the phantom zone: in a one-zone fleet, a healthy node that names a zone of its own does not turn the zone
//   breaker on against three genuinely broken machines;
// - relabel-away and dilution: healthy nodes that move out of a zone by label do not push it over the threshold,
//   and healthy nodes that move into a sick zone by label do not pull it under.
import { readFileSync } from "node:fs"
import { clients, createTestNamespace, deleteNamespace, uniqueName, waitFor } from "@nodemend/cluster-harness"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import { type ClusterFakeCloud, startClusterFakeCloud } from "./awsFakeCloudSupport.ts"
import {
  type ControllerFiber,
  awsTestConfig,
  FAKE_SUBNETS,
  fakeEc2,
  runPoolInstance,
  startAwsController,
  stopController,
  useFakeCredentials
} from "./awsController.ts"
import {
  type ControllerProcess,
  deployedNodeFlags,
  killControllers,
  startControllerProcess
} from "./controllerProcess.ts"
import { eventsSince, firstDecision, setKernelReady, waitForReady } from "./helpers.ts"

const { kc, core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const POOL_LABEL = "karpenter.sh/nodepool"
const ZONE = "topology.kubernetes.io/zone"
const RUN = uniqueName("fleetfig").slice(0, 36)
const SUBNET = { a: FAKE_SUBNETS[0], b: FAKE_SUBNETS[1] } as const
const STARTED = Date.now() - 2000
let ns = ""
let cloud: ClusterFakeCloud
let ec2: InstanceType<typeof Ec2Sdk.EC2Client>
let inProcess: ControllerFiber | undefined
const running: ControllerProcess[] = []

const launch = (pool: string, zone: keyof typeof SUBNET) =>
  runPoolInstance(ec2, { subnet: SUBNET[zone], pool: [POOL_LABEL, pool] })
const fleet = async (pool: string, zone: keyof typeof SUBNET, n: number) => {
  const names: string[] = []
  for (let i = 0; i < n; i++) names.push(await launch(pool, zone))
  return names
}
/** Each node's own kubelet credentials (a CSR approved once per node). */
const asNodes = new Map<string, Awaited<ReturnType<typeof nodeCore>>>()
/** The node relabels itself with its own kubelet credentials. */
const relabel = async (node: string, labels: Record<string, string>) => {
  const api = asNodes.get(node) ?? (await nodeCore(kc, node))
  asNodes.set(node, api)
  await api.patchNode(
    { name: node, body: { metadata: { labels } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
  )
}
const DECISIONS = ["RepairStarted", "RepairStandDown", "RepairBlocked", "RepairQueued", "RepairRefused"]
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const zoneConfig = (pool: string, fields: Record<string, unknown> = {}) =>
  awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL}=${pool}`,
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 3 }],
    maxUnhealthyPercent: 50,
    maxInFlight: "100%",
    ...fields
  })

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "fleetfig")
  cloud = await startClusterFakeCloud(core)
  ec2 = fakeEc2(cloud.url)
}, 60_000)
afterEach(async (ctx) => {
  await stopController(inProcess)
  inProcess = undefined
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  ec2?.destroy()
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

describe("label churn with a node's own credentials", () => {
  it("4,000 relabels leave the shipped controller's /metrics and RSS flat", async () => {
    const pool = `${RUN}-churn`
    const nodes = await fleet(pool, "a", 3)
    await waitForReady(core, nodes)
    const ctl = await startControllerProcess(
      kubeconfig,
      // Selected by hostname, which the attack leaves alone: by its pool label it would leave the selection.
      zoneConfig(pool, { nodeSelector: `kubernetes.io/hostname in (${nodes.join(",")})` }),
      `fleetfig-${process.pid}`,
      { bundle: true, nodeFlags: deployedNodeFlags() }
    )
    running.push(ctl)
    expect(ctl.port, ctl.logs().slice(-3000)).toBeGreaterThan(0)
    const scrape = async () => (await ctl.get("/metrics")).body
    const rss = () => {
      const status = readFileSync(`/proc/${ctl.proc.pid}/status`, "utf8")
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024
    }
    await waitFor("the pool's gauges", async () =>
      (await scrape()).includes(`nodemend_controller_pool_nodes{pool="${pool}"} 3`) ? true : undefined
    )
    // Settled: a metrics round (15 s) after the start's allocations.
    await sleep(16_000)
    const before = { bytes: (await scrape()).length, rss: rss() }
    const attacker = nodes[0]!
    const relabels = 4000
    for (let i = 0; i < relabels; i++)
      await relabel(attacker, { [POOL_LABEL]: `${RUN}-p${i}`, [ZONE]: `us-west-2z${i}` })
    await sleep(16_000)
    const after = { bytes: (await scrape()).length, rss: rss() }
    const text = await scrape()
    console.log(
      `label churn: ${relabels} relabels; /metrics ${before.bytes} -> ${after.bytes} bytes; RSS ${Math.round(before.rss / 2 ** 20)} -> ${Math.round(after.rss / 2 ** 20)} MiB`
    )
    expect(text).not.toMatch(new RegExp(`${RUN}-p\\d`))
    expect(text).not.toMatch(/us-west-2z\d/)
    expect(text).toContain(`nodemend_controller_pool_nodes{pool="${pool}"} 3`)
    // Before the fix, 4,000 relabels added ~28,000 series (~1.9 MB a scrape) and ~55 MiB of RSS.
    expect(after.bytes).toBeLessThan(before.bytes + 4096)
    expect(after.rss).toBeLessThan(before.rss + 24 * 2 ** 20)
  }, 300_000)
})

describe("zone and pool sizes come from the cloud, not from healthy nodes' labels", () => {
  it("the phantom zone: a healthy node naming its own zone does not stand three broken machines down", async () => {
    const pool = `${RUN}-ph`
    const nodes = await fleet(pool, "a", 10)
    await waitForReady(core, nodes)
    inProcess = await startAwsController(
      zoneConfig(pool, { zoneBreaker: { maxUnhealthyPercent: 20, minUnhealthyNodes: 2 } }),
      "fleetfig-ph"
    )
    await relabel(nodes[9]!, { [ZONE]: "us-west-2z" })
    const broken = nodes.slice(0, 3)
    for (const n of broken) await setKernelReady(core, n, "False")
    for (const n of broken) expect(await firstDecision(core, n, DECISIONS, STARTED), n).toBe("RepairStarted")
    for (const n of broken) expect(await eventsSince(core, n, "RepairStandDown", STARTED), n).toEqual([])
  }, 300_000)

  it("relabel-away, then dilution: the sick zone stands down by the cloud's figures, whatever the labels say", async () => {
    const pool = `${RUN}-zd`
    const a = await fleet(pool, "a", 5)
    const b = await fleet(pool, "b", 8)
    await waitForReady(core, [...a, ...b])
    inProcess = await startAwsController(
      zoneConfig(pool, { zoneBreaker: { maxUnhealthyPercent: 30, minUnhealthyNodes: 2 } }),
      "fleetfig-zd"
    )
    // Relabel-away: three of b's healthy nodes say they are in a. b has 2 of 8 unhealthy (25%, under 30%): its
    // repairs go ahead; by the labels it would be 2 of 5 (40%) while a is healthy, a stand-down.
    for (const n of b.slice(5)) await relabel(n, { [ZONE]: "us-west-2a" })
    for (const n of b.slice(0, 2)) await setKernelReady(core, n, "False")
    for (const n of b.slice(0, 2))
      expect(await firstDecision(core, n, DECISIONS, STARTED), n).toBe("RepairStarted")
    // Dilution: a's five healthy nodes say they are in b. Three more of b's machines break: 3 of 8 (37.5%) plus
    // the two repairs still counted there until they end; by the labels b would hold 13+ nodes, under 30%.
    for (const n of a) await relabel(n, { [ZONE]: "us-west-2b" })
    for (const n of b.slice(2, 5)) await setKernelReady(core, n, "False")
    for (const n of b.slice(2, 5))
      expect(await firstDecision(core, n, DECISIONS, STARTED), n).toBe("RepairStandDown")
    const [standDown] = await eventsSince(core, b[2]!, "RepairStandDown", STARTED)
    // Counted where the cloud placed them: a keeps its 5 healthy nodes, b its 8 machines (10 while the first two
    // repairs' replacements and old machines overlap), whatever the labels say.
    expect(standDown?.message).toMatch(
      /zone us-west-2b has [3-5] of (8|9|10) nodes unhealthy .* while us-west-2a has 0 of 5 /
    )
    for (const n of b.slice(2, 5)) expect(await eventsSince(core, n, "RepairStarted", STARTED), n).toEqual([])
  }, 300_000)
})
