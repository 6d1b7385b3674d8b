// Contract 8 (identity is proven, never read) for where a node counts: the real controller with
// `cloudProvider: aws` (composed as main.ts composes it) against the fake cloud, whose instances are kwok Nodes.
// Pool y (4 instances in zone b) has one repair behind it in its relapse ledger. Then a new instance of pool x in
// zone a, with its own node credentials (system:node:<name>), writes pool y and zone b on itself and reports the
// fault y's repair was for. Read from its labels it would be a relapse of y's repair (threshold 1: a hold on y),
// a second unhealthy node of y (breaker 20% of 5: open) and of zone b (2 of 6 while zone a is healthy: a
// stand-down). Counted where the cloud placed it (pool x, zone a) it is none of these, and y's next genuinely
// broken machine is repaired at once.
import { clients, createTestNamespace, deleteNamespace, uniqueName, waitFor } from "@nodemend/cluster-harness"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import { parseLedger, RELAPSE_LEDGER_LABEL } from "../../src/domain/RelapseLedger.ts"
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
import { eventsSince, firstDecision, setKernelReady, waitForEvent, waitForReady } from "./helpers.ts"

const { kc, core } = clients()
const POOL_LABEL = "karpenter.sh/nodepool"
const ZONE = "topology.kubernetes.io/zone"
const X = uniqueName("poolproof-x").slice(0, 40)
const Y = `${X}-y`
const SUBNET = { a: FAKE_SUBNETS[0], b: FAKE_SUBNETS[1] } as const
const STARTED = Date.now() - 2000
let ns = ""
let cloud: ClusterFakeCloud
let ec2: InstanceType<typeof Ec2Sdk.EC2Client>
let controller: ControllerFiber | undefined
const y: string[] = []

const launch = (pool: string, zone: keyof typeof SUBNET): Promise<string> =>
  runPoolInstance(ec2, { subnet: SUBNET[zone], pool: [POOL_LABEL, pool] })
const ledgersOfY = async () =>
  (await core.listNamespacedConfigMap({ namespace: ns, labelSelector: `${RELAPSE_LEDGER_LABEL}=true` })).items
    .map((cm) => parseLedger(cm.data?.ledger ?? ""))
    .flatMap((r) => (Result.isSuccess(r) && r.success.pool === Y ? [r.success] : []))

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "poolproof")
  cloud = await startClusterFakeCloud(core)
  ec2 = fakeEc2(cloud.url)
  const x = [await launch(X, "a"), await launch(X, "a")]
  for (let i = 0; i < 4; i++) y.push(await launch(Y, "b"))
  await waitForReady(core, [...x, ...y])
  const config = awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL} in (${X},${Y})`,
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 3 }],
    maxUnhealthyPercent: 20,
    maxInFlight: "100%",
    zoneBreaker: { maxUnhealthyPercent: 20, minUnhealthyNodes: 2 },
    relapse: { threshold: 1, windowSeconds: 600, quietSeconds: 3600 }
  })
  controller = await startAwsController(config, "poolproof")
}, 150_000)

afterAll(async () => {
  await stopController(controller)
  ec2?.destroy()
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

describe("a node that relabels itself into another pool and zone counts where the cloud put it", () => {
  it("no relapse, breaker or zone stand-down in pool y / zone b from it; y's broken machine is repaired", async () => {
    // Pool y's first repair: the ledger of ForkFailedOutOfPIDs in y has one repair.
    await setKernelReady(core, y[0]!, "False")
    await waitForEvent(core, y[0]!, "RepairStarted", 60_000)
    // Launched after y's repair started, so, read by its labels, it is a fresh node of y with y's fault.
    const attacker = await launch(X, "a")
    await waitForReady(core, [attacker])
    await waitForEvent(core, y[0]!, "RepairSucceeded", 120_000)
    await waitFor("y's relapse ledger with its repair", async () =>
      (await ledgersOfY()).some((l) => l.repairs.length === 1) ? true : undefined
    )

    const asNode = await nodeCore(kc, attacker)
    await asNode.patchNode(
      { name: attacker, body: { metadata: { labels: { [POOL_LABEL]: Y, [ZONE]: "us-west-2b" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await setKernelReady(core, attacker, "False")
    // Its own decision (it was counted and sighted before): with the fix, its repair is refused (its labels are
    // not its instance's); counted by its labels, its own relapse in y held it.
    const attackerDecided = await firstDecision(
      core,
      attacker,
      ["RepairRefused", "RepairHeld", "RepairStandDown", "RepairBlocked"],
      STARTED,
      30_000
    )

    await setKernelReady(core, y[1]!, "False")
    const victimDecided = await firstDecision(
      core,
      y[1]!,
      ["RepairStarted", "RepairHeld", "RepairBlocked", "RepairStandDown", "RepairQueued"],
      STARTED,
      30_000
    )
    expect(victimDecided).toBe("RepairStarted")
    for (const reason of ["RepairHeld", "RepairBlocked", "RepairStandDown", "RepairQueued"])
      expect(await eventsSince(core, y[1]!, reason, STARTED), reason).toEqual([])
    expect(attackerDecided).toBe("RepairRefused")
    const ledgers = await ledgersOfY()
    expect(ledgers.flatMap((l) => l.relapses)).toEqual([])
    expect(ledgers.some((l) => l.hold !== undefined)).toBe(false)
    await waitForEvent(core, y[1]!, "RepairSucceeded", 120_000)
    expect(await eventsSince(core, attacker, "RepairStarted", STARTED)).toEqual([])
  }, 300_000)
})
