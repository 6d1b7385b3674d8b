// Planned repairs for EC2 scheduled events (#42), end to end: the real controller with `cloudProvider: aws`, the
// fake cloud's DescribeInstanceStatus and admin API, kwok Nodes in the real test cluster.
//  - a retirement scheduled on an instance -> RepairPlanned (and the plan in the controller's journal), then replaced
//    (capacity first) before its NotBefore, terminated once, no condition on the Node; its workload pods evicted
//    once each and come back on the replacement, none scheduled twice
//  - a retirement cancelled before its due time -> no repair
//  - a system-reboot, which EC2 keeps listing after the reboot: rebooted once, and a restarted controller does not
//    reboot it again (the acted mark is journaled)
import { clients, createTestNamespace, deleteNamespace, uniqueName, waitFor } from "@nodemend/cluster-harness"
import { AppsV1Api, type CoreV1Api, type V1Pod, Watch } from "@kubernetes/client-node"
import { Result } from "effect"
import { parseActed, parsePlans, PLANNED_REPAIRS_CONFIGMAP } from "../../src/domain/PlannedRepairs.ts"
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
import {
  eventsSince,
  isReady,
  readNodeOrUndefined,
  sleep,
  waitForEventSince,
  waitForNodeGone
} from "./helpers.ts"

const { core, kc } = clients()
const apps = kc.makeApiClient(AppsV1Api)
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("sched").slice(0, 40)
/** The lead: an event NotBefore 60 min away is due LEAD_SLACK_S seconds from now. */
const LEAD_SLACK_S = 6
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined
let controllerConfig: ReturnType<typeof awsTestConfig>
const nodes: string[] = []

/** The controller's planned repairs journal: its plans and the events it acted on. */
const journal = async () => {
  const cm = await core
    .readNamespacedConfigMap({ namespace: ns, name: PLANNED_REPAIRS_CONFIGMAP })
    .catch(() => undefined)
  return {
    plans: Result.getOrElse(parsePlans(cm?.data?.plans ?? '{"v":1,"plans":[]}'), () => []),
    acted: Result.getOrElse(parseActed(cm?.data?.acted ?? '{"v":1,"acted":[]}'), () => [])
  }
}

interface PodSeen {
  readonly name: string
  readonly nodes: Set<string>
  evicted: boolean
  deleted: boolean
}

/** Every pod of the namespace the API server reports from now on, by uid (a watch, so none is missed). */
const watchPods = (namespace: string) => {
  const seen = new Map<string, PodSeen>()
  let stopped = false
  let rv = ""
  let ctl: AbortController | undefined
  const onPod = (type: string, p: V1Pod) => {
    const uid = p.metadata?.uid ?? ""
    const s = seen.get(uid) ?? {
      name: p.metadata?.name ?? "",
      nodes: new Set(),
      evicted: false,
      deleted: false
    }
    if (p.spec?.nodeName) s.nodes.add(p.spec.nodeName)
    // The Eviction API marks the pod it evicts (DisruptionTarget, EvictionByEvictionAPI) before it goes.
    if (
      p.status?.conditions?.some((c) => c.type === "DisruptionTarget" && c.reason === "EvictionByEvictionAPI")
    )
      s.evicted = true
    if (type === "DELETED") s.deleted = true
    seen.set(uid, s)
  }
  const run = async (): Promise<void> => {
    if (stopped) return
    if (rv === "") {
      const l = await core.listNamespacedPod({ namespace })
      for (const p of l.items) onPod("ADDED", p)
      rv = l.metadata?.resourceVersion ?? ""
    }
    ctl = await new Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 25 },
      (type, obj: V1Pod) => {
        if (type === "ERROR") return
        rv = obj.metadata?.resourceVersion ?? rv
        if (type !== "BOOKMARK") onPod(type, obj)
      },
      () => {
        if (!stopped) setTimeout(() => void run(), 0)
      }
    )
  }
  const started = run()
  return {
    seen,
    started,
    stop: () => {
      stopped = true
      ctl?.abort()
    }
  }
}

/** A ReplicaSet of `replicas` pods that may run only on `target` or on a node of the pool not in `others`. */
const createWorkload = (name: string, replicas: number, others: ReadonlyArray<string>) =>
  apps.createNamespacedReplicaSet({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }],
            terminationGracePeriodSeconds: 0,
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: POOL_LABEL, operator: "In", values: [POOL] },
                        { key: "kubernetes.io/hostname", operator: "NotIn", values: [...others] }
                      ]
                    }
                  ]
                }
              }
            }
          }
        }
      }
    }
  })

/** Events about `node` with `reason` recorded since this file started (names could repeat across runs). */
const STARTED = Date.now() - 2000
const events = (core: CoreV1Api, node: string, reason: string) => eventsSince(core, node, reason, STARTED)
const waitForEvent = (node: string, reason: string, timeoutMs = 60_000) =>
  waitForEventSince(core, node, reason, STARTED, timeoutMs)
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
  controllerConfig = awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL}=${POOL}`,
    scheduledEvents: { refreshSeconds: 1, leadSeconds: 3600 - LEAD_SLACK_S },
    reboot: { settleSeconds: 2, timeoutSeconds: 60 }
  })
  controller = await startAwsController(controllerConfig, "aws-sched")
}, 120_000)

afterAll(async () => {
  await stopController(controller)
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

describe("EC2 scheduled events -> planned repairs", () => {
  it("a retirement is planned, then replaced capacity first before its NotBefore; terminated once; pods moved once", async () => {
    const target = nodes[0]!
    const id = instanceOf(target).instanceId
    const launchesBefore = (await cloud.admin.stats()).launches
    // The workload: 3 pods that can run only on the target or a new node of the pool (the replacement).
    const pods = watchPods(ns)
    await pods.started
    await createWorkload("retiring-work", 3, nodes.slice(1))
    const running = () =>
      core
        .listNamespacedPod({ namespace: ns, labelSelector: "app=retiring-work" })
        .then((l) => l.items.filter((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp))
    const before = await waitFor(
      "the workload's 3 pods running on the target",
      async () => {
        const r = await running()
        return r.length === 3 && r.every((p) => p.spec?.nodeName === target) ? r : undefined
      },
      { timeoutMs: 60_000 }
    )
    const originals = new Set(before.map((p) => p.metadata!.uid!))
    const e = await cloud.admin.scheduleEvent(id, { code: "instance-retirement", notBeforeInMinutes: 60 })
    const [planned] = await waitForEvent(target, "RepairPlanned", 30_000)
    expect(planned?.message).toContain(`EC2 instance-retirement ${e.instanceEventId}`)
    expect(await events(core, target, "RepairStarted")).toEqual([])
    // The plan is in the controller's journal (what `kubectl nodemend status` shows), waiting for its due time.
    const plan = await waitFor(
      "the plan in the journal",
      async () => (await journal()).plans.find((p) => p.node === target),
      { timeoutMs: 10_000, intervalMs: 200 }
    )
    expect(plan).toMatchObject({ eventId: e.instanceEventId, code: "instance-retirement", action: "Replace" })
    expect(plan.notBefore).toBe(Date.parse(e.notBefore))
    expect(plan.dueAt).toBe(Date.parse(e.notBefore) - (3600 - LEAD_SLACK_S) * 1000)
    expect(["waiting", "held"]).toContain(plan.state)
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
    // The started repair's event is journaled as acted; its plan is gone from the journal.
    const after = await journal()
    expect(after.acted.map((m) => m.eventId)).toContain(e.instanceEventId)
    expect(after.plans.find((p) => p.node === target)).toBeUndefined()

    // Pods moved once: the 3 pods on the retiring instance evicted (once each: a uid is evicted once), and 3 new
    // ones running on the replacement; no pod but the originals was evicted or deleted, none ran anywhere else.
    await waitFor(
      "the workload's 3 pods running on the replacement",
      async () => {
        const r = await running()
        return r.length === 3 && r.every((p) => p.spec?.nodeName === replacement.nodeName) ? r : undefined
      },
      { timeoutMs: 60_000 }
    )
    await sleep(1000)
    pods.stop()
    const seen = [...pods.seen.entries()].filter(([, p]) => p.name.startsWith("retiring-work-"))
    const evicted = seen.filter(([, p]) => p.evicted).map(([uid]) => uid)
    const deleted = seen.filter(([, p]) => p.deleted).map(([uid]) => uid)
    expect(new Set(evicted)).toEqual(originals)
    expect(new Set(deleted)).toEqual(originals)
    const created = seen.filter(([uid]) => !originals.has(uid))
    expect(created).toHaveLength(3)
    for (const [, p] of created) expect([...p.nodes]).toEqual([replacement.nodeName])
    await apps.deleteNamespacedReplicaSet({ namespace: ns, name: "retiring-work" })
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

  it("a system-reboot EC2 keeps listing is rebooted once, and a restarted controller does not reboot it again", async () => {
    const target = nodes[2]!
    const id = instanceOf(target).instanceId
    const e = await cloud.admin.scheduleEvent(id, { code: "system-reboot", notBeforeInMinutes: 60 })
    const [started] = await waitForEvent(target, "RepairStarted", 60_000)
    expect(started?.message).toContain("EC2ScheduledEvent=True (EC2SystemRebootScheduled)")
    await waitForEvent(target, "RepairSucceeded", 60_000)
    expect((await cloud.admin.stats()).reboots[id]).toBe(1)
    expect((await journal()).acted.map((m) => m.eventId)).toContain(e.instanceEventId)
    // EC2 still lists the event (its reboot is its own, at NotBefore): only the journal keeps it from a second plan.
    await stopController(controller)
    controller = await startAwsController(controllerConfig, "aws-sched-restarted")
    await sleep(8000)
    expect((await cloud.admin.stats()).reboots[id]).toBe(1)
    expect(await events(core, target, "RepairStarted")).toHaveLength(1)
    expect(await ready(target)).toBe(true)
  }, 120_000)
})
