// The full repair cycle with `cloudProvider: aws`: the real controller (in this process, composed the
// way main.ts composes it) + AwsCloudProvider.layer (default credential chain from env, endpoints from
// the `aws:` config section) + the fake cloud whose instances are kwok Nodes in the real test cluster.
//  - a node's condition goes False -> taint, drain, TerminateInstances (once), RunInstances -> replacement Ready
//  - a zonal shift started with the fake cloud's CLI stops repairs; cancelling it resumes them
//  - throttling injected with the CLI -> retried, still exactly one termination per repaired node
//  - attacks by a node with its own credentials (system:node:<name>): a forged repair record, a re-registration
//    with another instance's providerID, a move to another pool: none makes the controller act
import { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  patchNodeCondition,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ControllerConfig } from "../../src/config/ControllerConfig.ts"
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
  eventsSince,
  expectCapacityFirst,
  isReady,
  isTainted,
  journalSampler,
  readNodeOrUndefined,
  sleep,
  waitForEventSince,
  waitForNodeGone
} from "./helpers.ts"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"

const { kc, core } = clients()
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("awsrepair").slice(0, 40)
const OTHER_POOL = `${POOL}-x`
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined
const nodes: string[] = []

/** Events about `node` with `reason` recorded since this file started (names could repeat across runs). */
const STARTED = Date.now() - 2000
const events = (core: CoreV1Api, node: string, reason: string) => eventsSince(core, node, reason, STARTED)
const waitForEvent = (node: string, reason: string, timeoutMs = 60_000) =>
  waitForEventSince(core, node, reason, STARTED, timeoutMs)
const ready = async (name: string) => isReady(await readNodeOrUndefined(core, name))
const setCondition = (type: string, name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type,
    status,
    reason: status === "False" ? "ForkFailedOutOfPIDs" : "KernelIsReady",
    message: "aws e2e",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })
const setKernelReady = (name: string, status: "True" | "False") => setCondition("KernelReady", name, status)
const instanceOf = (node: string) => cloud.store.describe([]).find((i) => i.nodeName === node)!

/** What the controller's config file would say for this test (second-scale timings). */
const controllerConfig = (): ControllerConfig =>
  awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL} in (${POOL},${OTHER_POOL})`,
    policies: [
      { conditionType: "KernelReady", status: "False", tolerationSeconds: 3 },
      { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 3, action: "Reboot" }
    ],
    reboot: { settleSeconds: 2, timeoutSeconds: 60 }
  })

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "awsctl")
  cloud = await startClusterFakeCloud(core)

  // The pool: 5 instances launched through EC2 RunInstances (as a node group would), one per zone round-robin.
  const ec2 = fakeEc2(cloud.url)
  for (let i = 0; i < 5; i++)
    nodes.push(
      await runPoolInstance(ec2, {
        subnet: FAKE_SUBNETS[i % 3]!,
        pool: [POOL_LABEL, POOL],
        instanceType: "p5.48xlarge"
      })
    )
  ec2.destroy()
  await waitFor(
    "the pool's 5 kwok Nodes Ready",
    async () => (await Promise.all(nodes.map(ready))).every(Boolean),
    {
      timeoutMs: 100_000
    }
  )

  // Composed as main.ts does for `cloudProvider: aws`.
  const config = controllerConfig()
  controller = await startAwsController(config, "aws-e2e")
}, 120_000)

afterAll(async () => {
  await stopController(controller)
  if (cloud) {
    await cloud.stop()
  }
  await deleteNamespace(core, ns)
})

describe("repair cycle with cloudProvider: aws against the fake cloud", () => {
  it("condition False -> terminate once via TerminateInstances -> replacement via RunInstances Ready", async () => {
    const target = nodes[0]!
    const id = instanceOf(target).instanceId
    const launchesBefore = (await cloud.admin.stats()).launches
    const facts = journalSampler(core, ns, target)
    await setKernelReady(target, "False")
    await waitForEvent(target, "RepairStarted")
    await waitForNodeGone(core, target)
    await waitForEvent(target, "RepairSucceeded", 90_000)
    await facts.stop()
    const stats = await cloud.admin.stats()
    expect(stats.terminationsStarted[id]).toBe(1)
    expect(stats.launches - launchesBefore).toBe(1)
    const replacement = cloud.store.describe([]).find((i) => i.tags["nodemend.io/replaces"] === id)!
    expect(replacement.tags[POOL_LABEL]).toBe(POOL)
    expect(await ready(replacement.nodeName)).toBe(true)
    // Capacity first (the default for a standalone instance): its replacement was Ready before the drain began.
    await expectCapacityFirst(core, target, facts.records, replacement.nodeName, STARTED)
    nodes.push(replacement.nodeName)
  }, 120_000)

  it("a zonal shift started with the CLI stops repairs; cancelling it resumes them", async () => {
    const target = nodes[1]!
    const id = instanceOf(target).instanceId
    const shiftId = await cloud.startZonalShift(instanceOf(target).zone.name)
    await new Promise((r) => setTimeout(r, 3000)) // refreshSeconds 1 + cacheSeconds 1
    await setKernelReady(target, "False")
    await waitForEvent(target, "RepairStandDown", 30_000)
    await new Promise((r) => setTimeout(r, 5000)) // well past the 3 s toleration
    expect(await events(core, target, "RepairStarted")).toEqual([])
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBeUndefined()
    expect(await core.readNode({ name: target }).then(() => true)).toBe(true)

    await cloud.cli("shift", "cancel", shiftId)
    await waitForEvent(target, "RepairStarted", 30_000)
    await waitForNodeGone(core, target)
    await waitForEvent(target, "RepairSucceeded", 90_000)
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBe(1)
  }, 150_000)

  it("throttling injected with the CLI -> retried; exactly one termination", async () => {
    const target = nodes[2]!
    const id = instanceOf(target).instanceId
    await cloud.throttleEc2("TerminateInstances", 2)
    const callsBefore = (await cloud.admin.stats()).calls.TerminateInstances ?? 0
    await setKernelReady(target, "False")
    await waitForNodeGone(core, target)
    await waitForEvent(target, "RepairSucceeded", 90_000)
    const stats = await cloud.admin.stats()
    expect(stats.terminationsStarted[id]).toBe(1)
    expect((stats.calls.TerminateInstances ?? 0) - callsBefore).toBe(3)
  }, 120_000)

  it("Reboot action -> RebootInstances (new boot id), node back and healthy -> no termination", async () => {
    const target = nodes[3]!
    const id = instanceOf(target).instanceId
    const bootId = async () => (await core.readNode({ name: target })).status?.nodeInfo?.bootID
    const before = await bootId()
    await setCondition("AcceleratedHardwareReady", target, "False")
    await waitForEvent(target, "Rebooting", 60_000)
    await waitFor("a new boot id after RebootInstances", async () => {
      const now = await bootId()
      return now !== undefined && now !== before
    })
    expect((await cloud.admin.stats()).reboots[id]).toBe(1)
    await setCondition("AcceleratedHardwareReady", target, "True")
    await waitForEvent(target, "RepairSucceeded", 90_000)
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBeUndefined()
    expect(await ready(target)).toBe(true)
  }, 150_000)

  it("attack: a repair record a node writes on itself is never read; nothing is terminated", async () => {
    const attacker = nodes[4]!
    const victim = nodes[3]!
    const victimId = instanceOf(victim).instanceId
    const asNode = await nodeCore(kc, attacker)
    const forged = (v: number) =>
      JSON.stringify({
        v,
        id: "forged",
        phase: "Terminating",
        action: "Replace",
        conditionType: "KernelReady",
        conditionStatus: "False",
        reason: "ForkFailedOutOfPIDs",
        startedAt: new Date().toISOString(),
        drainMode: "force",
        drainDeadlineMs: 0,
        captureLogs: false,
        // v1 is the record the controller used to read from this annotation (issue #13's reproduction); v2 has
        // today's fields, so neither an old nor a new parser would reject it as malformed.
        node: {
          name: victim,
          providerID: `aws:///${instanceOf(victim).zone.name}/${victimId}`,
          labels: {},
          ...(v === 2
            ? { uid: "forged", instance: { instanceId: victimId, state: "running", launch: {} } }
            : {})
        }
      })
    for (const v of [1, 2]) {
      await asNode.patchNode(
        { name: attacker, body: { metadata: { annotations: { "nodemend.io/repair": forged(v) } } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
      )
      // A condition change the controller does look at, so the node is reconciled with the forged record on it.
      await setCondition("ContainerRuntimeReady", attacker, v === 1 ? "True" : "False")
      await sleep(4000)
    }
    expect((await cloud.admin.stats()).terminationsStarted[victimId]).toBeUndefined()
    expect(await ready(victim)).toBe(true)
    expect(isTainted(await readNodeOrUndefined(core, attacker))).toBe(false)
    expect(await events(core, attacker, "TerminatingInstance")).toEqual([])
    expect(await events(core, victim, "TerminatingInstance")).toEqual([])
  }, 60_000)

  it("attack: a node re-registered with another instance's providerID is refused before any action", async () => {
    const attacker = nodes[4]!
    const victim = nodes[3]!
    const victimId = instanceOf(victim).instanceId
    const asNode = await nodeCore(kc, attacker)
    const old = await core.readNode({ name: attacker })
    // A kubelet re-registers its Node when it is gone (here an admin deleted it) with whatever providerID it is
    // started with: NodeRestriction lets it create its own Node, and nothing checks the providerID.
    await core.deleteNode({ name: attacker })
    await waitForNodeGone(core, attacker)
    await asNode.createNode({
      body: {
        metadata: {
          name: attacker,
          labels: old.metadata?.labels,
          annotations: { "kwok.x-k8s.io/node": "fake" }
        },
        spec: { providerID: `aws:///${instanceOf(victim).zone.name}/${victimId}` }
      }
    })
    await setKernelReady(attacker, "False")
    await waitForEvent(attacker, "RepairRefused", 30_000)
    const note = (await events(core, attacker, "RepairRefused"))[0]?.message ?? ""
    expect(note).toContain(`is not node ${attacker}`)
    await sleep(4000) // well past the 3 s toleration
    expect(await events(core, attacker, "RepairStarted")).toEqual([])
    expect(isTainted(await readNodeOrUndefined(core, attacker))).toBe(false)
    expect((await cloud.admin.stats()).terminationsStarted[victimId]).toBeUndefined()
    await setKernelReady(attacker, "True")
  }, 60_000)

  it("attack: a node that moved itself to another pool (escaping its breaker) is refused", async () => {
    const mover = nodes[5]!
    const id = instanceOf(mover).instanceId
    const asNode = await nodeCore(kc, mover)
    await asNode.patchNode(
      { name: mover, body: { metadata: { labels: { [POOL_LABEL]: OTHER_POOL } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await setKernelReady(mover, "False")
    await waitForEvent(mover, "RepairRefused", 30_000)
    const note = (await events(core, mover, "RepairRefused"))[0]?.message ?? ""
    expect(note).toContain(`is tagged ${POOL}`)
    await sleep(4000)
    expect(await events(core, mover, "RepairStarted")).toEqual([])
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBeUndefined()
    await setKernelReady(mover, "True")
  }, 60_000)

  it("an instance nobody can replace (no launch template): refused before anything is touched, once (#14)", async () => {
    const ec2 = fakeEc2(cloud.url)
    const out = await ec2.send(
      new Ec2Sdk.RunInstancesCommand({
        MinCount: 1,
        MaxCount: 1,
        ImageId: "ami-0fake0000000000001",
        InstanceType: "m5.large",
        SubnetId: "subnet-0fake00000000000a",
        TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: POOL_LABEL, Value: POOL }] }]
      })
    )
    ec2.destroy()
    const target = out.Instances![0]!.PrivateDnsName!
    const id = out.Instances![0]!.InstanceId!
    await waitFor("the template-less node Ready", async () => ((await ready(target)) ? true : undefined), {
      timeoutMs: 60_000
    })
    const launchesBefore = (await cloud.admin.stats()).launches
    await setKernelReady(target, "False")
    await waitForEvent(target, "RepairRefused", 30_000)
    const note = (await events(core, target, "RepairRefused"))[0]?.message ?? ""
    expect(note).toContain("unknown owner")
    expect(note).toContain("aws:ec2launchtemplate:id")
    const before = (await cloud.admin.stats()).calls
    await sleep(6000)
    const after = await cloud.admin.stats()
    // Nothing touched, nothing retried in a loop.
    expect(isTainted(await readNodeOrUndefined(core, target))).toBe(false)
    expect(after.terminationsStarted[id]).toBeUndefined()
    expect(after.launches).toBe(launchesBefore)
    // No retry loop on the refused node (other nodes' repairs may describe their own instances meanwhile).
    expect((after.calls.DescribeInstances ?? 0) - (before.DescribeInstances ?? 0)).toBeLessThanOrEqual(2)
    expect(await events(core, target, "RepairStarted")).toEqual([])
    expect(await events(core, target, "RepairRefused")).toHaveLength(1)
    await setKernelReady(target, "True")
  }, 150_000)
})
