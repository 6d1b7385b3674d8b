// An Auto Scaling group member repaired through its group (#16), with `cloudProvider: aws` against the fake cloud's
// Auto Scaling mode (its members are kwok Nodes in the real test cluster) and the real controller composed as
// main.ts composes it. Capacity first by default: the group grows to desired+1, the new member's Node is Ready
// before the broken node is drained, then the broken instance is terminated with decrement so the group returns to
// its size. No RunInstances call, no second instance.
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  patchNodeCondition,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import type { AdminGroup } from "@nodemend/fake-cloud"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ControllerConfig } from "../../src/config/ControllerConfig.ts"
import { type ClusterFakeCloud, startClusterFakeCloud } from "./awsFakeCloudSupport.ts"
import {
  type ControllerFiber,
  awsTestConfig,
  startAwsController,
  stopController,
  useFakeCredentials
} from "./awsController.ts"
import { eventTime, expectCapacityFirst, isReady, readNodeOrUndefined, waitForNodeGone } from "./helpers.ts"

const { core } = clients()
const POOL_LABEL = "nodemend.io/pool"
const POOL = uniqueName("asgrepair").slice(0, 40)
const GROUP = POOL
const SIZE = 3
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined

const STARTED = Date.now() - 2000
const events = async (node: string, reason: string) =>
  (
    await core.listNamespacedEvent({
      namespace: "default",
      fieldSelector: `involvedObject.name=${node},reason=${reason}`
    })
  ).items.filter((e) => eventTime(e) >= STARTED)
const ready = async (name: string) => isReady(await readNodeOrUndefined(core, name))
const group = (): Promise<AdminGroup> => cloud.admin.autoScalingGroup(GROUP)
const liveMembers = async () => (await group()).members.filter((m) => m.lifecycleState !== "Terminating")

const controllerConfig = (): ControllerConfig =>
  awsTestConfig(
    ns,
    cloud.url,
    {
      poolLabel: POOL_LABEL,
      nodeSelector: `${POOL_LABEL}=${POOL}`,
      // One repair at a time in a pool of 3 (the default 10% rounds to at least one).
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 3 }]
    },
    { autoScaling: cloud.url }
  )

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "asgctl")
  cloud = await startClusterFakeCloud(core)
  // The pool is an Auto Scaling group: its members are launched by the group, never by RunInstances.
  await cloud.createGroup(GROUP, SIZE, { [POOL_LABEL]: POOL })
  await waitFor(
    "the group's kwok Nodes Ready",
    async () => (await Promise.all((await group()).members.map((m) => ready(m.nodeName)))).every(Boolean),
    { timeoutMs: 100_000 }
  )

  const config = controllerConfig()
  controller = await startAwsController(config, "asg-e2e")
}, 120_000)

afterAll(async () => {
  await stopController(controller)
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

interface Snapshot {
  readonly phase: string
  readonly drainStartedAt?: string
  readonly replacement?: {
    instanceId?: string
    nodeName?: string
    autoScalingGroup?: string
    desiredCapacity?: number
  }
}

/** Samples the repair's journal record and the group's desired capacity until stopped (the record is deleted at the end). */
const sampler = (node: string) => {
  const records: Snapshot[] = []
  const desired: number[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const cm = await core
        .readNamespacedConfigMap({ namespace: ns, name: `nodemend-repair-${node}` })
        .catch(() => undefined)
      if (cm?.data?.record) records.push(JSON.parse(cm.data.record) as Snapshot)
      desired.push((await group()).desiredCapacity)
      await new Promise((r) => setTimeout(r, 150))
    }
  })()
  return {
    records,
    desired,
    stop: async () => {
      running = false
      await loop
    }
  }
}

describe("an Auto Scaling group member with a failed condition (cloudProvider: aws, fake cloud's Auto Scaling mode)", () => {
  it("is repaired through its group, capacity first: grown to desired+1, new Node Ready before the drain, old one terminated with decrement; no RunInstances", async () => {
    const before = await group()
    const target = before.members[0]!
    const others = before.members.slice(1).map((m) => m.instanceId)
    const statsBefore = await cloud.admin.stats()
    // A workload pod on the broken node: the drain must move it, and only after the replacement is Ready.
    const pod = `work-${Date.now().toString(36)}`
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: pod, labels: { app: "work" } },
        spec: {
          nodeName: target.nodeName,
          containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10" }]
        }
      }
    })
    await waitFor(
      "the workload pod running",
      async () =>
        (await core.readNamespacedPod({ namespace: ns, name: pod })).status?.phase === "Running"
          ? true
          : undefined,
      { timeoutMs: 30_000 }
    )
    const facts = sampler(target.nodeName)

    await patchNodeCondition(core, target.nodeName, {
      type: "KernelReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs",
      message: "asg e2e",
      lastHeartbeatTime: new Date(),
      lastTransitionTime: new Date()
    })
    await waitFor(
      "RepairSucceeded",
      async () => ((await events(target.nodeName, "RepairSucceeded")).length > 0 ? true : undefined),
      {
        timeoutMs: 100_000,
        intervalMs: 250
      }
    )
    await waitForNodeGone(core, target.nodeName)
    await facts.stop()

    // Through the group: no RunInstances call, exactly one instance launched (by the group), the old one terminated
    // once; the group is back to its size with the old member gone and no second newcomer.
    const stats = await cloud.admin.stats()
    expect(stats.calls.RunInstances ?? 0).toBe(statsBefore.calls.RunInstances ?? 0)
    expect(stats.launchesBy.runInstances).toBe(statsBefore.launchesBy.runInstances)
    expect(stats.launchesBy.autoScaling - statsBefore.launchesBy.autoScaling).toBe(1)
    expect(stats.terminationsStarted[target.instanceId]).toBe(1)
    expect(
      (stats.calls.TerminateInstanceInAutoScalingGroup ?? 0) -
        (statsBefore.calls.TerminateInstanceInAutoScalingGroup ?? 0)
    ).toBe(1)
    expect(stats.calls.TerminateInstances ?? 0).toBe(statsBefore.calls.TerminateInstances ?? 0)
    await waitFor(
      "the group back to its size",
      async () => ((await group()).desiredCapacity === SIZE ? true : undefined),
      {
        timeoutMs: 10_000
      }
    )
    const live = await liveMembers()
    expect(live).toHaveLength(SIZE)
    const newcomers = live.filter((m) => !others.includes(m.instanceId))
    expect(newcomers).toHaveLength(1)
    const newcomer = newcomers[0]!
    expect(newcomer.instanceId).not.toBe(target.instanceId)
    expect(await ready(newcomer.nodeName)).toBe(true)

    // Capacity first: the group was grown to desired+1 (recorded once, as an absolute size) while the old node ran.
    expect(Math.max(...facts.desired)).toBe(SIZE + 1)
    const last = facts.records.at(-1)!
    expect(last.replacement).toMatchObject({
      autoScalingGroup: GROUP,
      desiredCapacity: SIZE + 1,
      instanceId: newcomer.instanceId,
      nodeName: newcomer.nodeName
    })
    // The order, from the controller's own Events and record and from the cluster: replacement Ready, then the
    // drain, then termination (as the kwok and standalone EC2 tests assert it).
    await expectCapacityFirst(core, target.nodeName, facts.records, newcomer.nodeName, STARTED)
    // The pod was moved off the broken node by the drain.
    const gone = await core.readNamespacedPod({ namespace: ns, name: pod }).catch(() => undefined)
    expect(gone === undefined || gone.metadata?.deletionTimestamp !== undefined).toBe(true)
  }, 150_000)
})
