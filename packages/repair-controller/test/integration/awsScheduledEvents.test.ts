// Planned repairs for EC2 scheduled events (#42), end to end: the real controller with `cloudProvider: aws`, the
// fake cloud's DescribeInstanceStatus and admin API, kwok Nodes in the real test cluster.
//  - a retirement scheduled on an instance -> RepairPlanned, then replaced (capacity first) before its NotBefore,
//    terminated once, no condition on the Node
//  - a retirement cancelled before its due time -> no repair
import { clients, createTestNamespace, deleteNamespace, uniqueName, waitFor } from "@nodemend/cluster-harness"
import type { CoreV1Api } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
import { isReady, readNodeOrUndefined, sleep, waitForNodeGone } from "./helpers.ts"

const { core } = clients()
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("sched").slice(0, 40)
/** The lead: an event NotBefore 60 min away is due LEAD_SLACK_S seconds from now. */
const LEAD_SLACK_S = 6
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined
const nodes: string[] = []

const STARTED = Date.now() - 2000
const events = async (core: CoreV1Api, node: string, reason: string) =>
  (
    await core.listNamespacedEvent({
      namespace: "default",
      fieldSelector: `involvedObject.name=${node},reason=${reason}`
    })
  ).items.filter((e) => {
    const at = e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp
    return at === undefined || new Date(String(at)).getTime() >= STARTED
  })
const waitForEvent = (node: string, reason: string, timeoutMs = 60_000) =>
  waitFor(
    `event ${reason} on ${node}`,
    async () => {
      const found = await events(core, node, reason)
      return found.length > 0 ? found : undefined
    },
    { timeoutMs, intervalMs: 250 }
  )
const ready = async (name: string) => isReady(await readNodeOrUndefined(core, name))
const instanceOf = (node: string) => cloud.store.describe([]).find((i) => i.nodeName === node)!

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "schedev")
  cloud = await startClusterFakeCloud(core)
  const ec2 = fakeEc2(cloud.url)
  for (let i = 0; i < 5; i++)
    nodes.push(await runPoolInstance(ec2, { subnet: FAKE_SUBNETS[i % 3]!, pool: [POOL_LABEL, POOL] }))
  ec2.destroy()
  await waitFor(
    "the pool's 5 kwok Nodes Ready",
    async () => (await Promise.all(nodes.map(ready))).every(Boolean),
    {
      timeoutMs: 100_000
    }
  )
  const config = awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL}=${POOL}`,
    scheduledEvents: { refreshSeconds: 1, leadSeconds: 3600 - LEAD_SLACK_S }
  })
  controller = await startAwsController(config, "aws-sched")
}, 120_000)

afterAll(async () => {
  await stopController(controller)
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

describe("EC2 scheduled events -> planned repairs", () => {
  it("a retirement is planned, then replaced capacity first before its NotBefore; terminated once", async () => {
    const target = nodes[0]!
    const id = instanceOf(target).instanceId
    const launchesBefore = (await cloud.admin.stats()).launches
    const e = await cloud.admin.scheduleEvent(id, { code: "instance-retirement", notBeforeInMinutes: 60 })
    const [planned] = await waitForEvent(target, "RepairPlanned", 30_000)
    expect(planned?.message).toContain(`EC2 instance-retirement ${e.instanceEventId}`)
    expect(await events(core, target, "RepairStarted")).toEqual([])
    const [started] = await waitForEvent(target, "RepairStarted", 60_000)
    expect(started?.message).toContain("EC2ScheduledEvent=True (EC2InstanceRetirementScheduled)")
    await waitForNodeGone(core, target)
    await waitForEvent(target, "RepairSucceeded", 90_000)
    expect(Date.now()).toBeLessThan(Date.parse(e.notBefore))
    const stats = await cloud.admin.stats()
    expect(stats.terminationsStarted[id]).toBe(1)
    expect(stats.launches - launchesBefore).toBe(1)
    const replacement = cloud.store.describe([]).find((i) => i.tags["nodemend.io/replaces"] === id)!
    expect(await ready(replacement.nodeName)).toBe(true)
    nodes.push(replacement.nodeName)
  }, 150_000)

  it("a retirement cancelled before its due time is not repaired", async () => {
    const target = nodes[1]!
    const id = instanceOf(target).instanceId
    const e = await cloud.admin.scheduleEvent(id, { code: "instance-retirement", notBeforeInMinutes: 60 })
    await waitForEvent(target, "RepairPlanned", 30_000)
    await cloud.admin.endEvent(id, e.instanceEventId, "canceled")
    await sleep((LEAD_SLACK_S + 6) * 1000)
    expect(await events(core, target, "RepairStarted")).toEqual([])
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBeUndefined()
    expect(await ready(target)).toBe(true)
  }, 60_000)
})
