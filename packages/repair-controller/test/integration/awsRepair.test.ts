// The full repair cycle with `cloudProvider: aws`: the real controller (in this process, composed the
// way main.ts composes it) + AwsCloudProvider.layer (default credential chain from env, endpoints from
// the `aws:` config section) + the fake cloud whose instances are kwok Nodes in the real test cluster.
//  - a node's condition goes False -> taint, drain, TerminateInstances (once), RunInstances -> replacement Ready
//  - a zonal shift started with the fake cloud's CLI stops repairs; cancelling it resumes them
//  - throttling injected with the CLI -> retried, still exactly one termination per repaired node
import { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  patchNodeCondition,
  uniqueName,
  waitFor,
  kubeconfigPath
} from "@nodemend/cluster-harness"
import type { CoreV1Api } from "@kubernetes/client-node"
import { Effect, Fiber, Layer, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AwsCloudProvider, decodeAwsConfig } from "../../src/cloud/aws/index.ts"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../../src/config/ControllerConfig.ts"
import { startController } from "../../src/controller/Controller.ts"
import { Kube, loadKubeAccess, makeKube } from "../../src/kube/Kube.ts"
import { noLogCaptureLayer } from "../../src/repair/LogCaptureHook.ts"
import { CLUSTER_ARN, type ClusterFakeCloud, startClusterFakeCloud } from "./awsFakeCloudSupport.ts"
import { isReady, readNodeOrUndefined, waitForNodeGone } from "./helpers.ts"

const { kc, core } = clients()
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("awsrepair").slice(0, 40)
let ns = ""
let cloud: ClusterFakeCloud
let controller: Fiber.Fiber<unknown, unknown> | undefined
const nodes: string[] = []

/** Events about `node` with `reason` recorded since this file started (names could repeat across runs). */
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
    async () => ((await events(core, node, reason)).length > 0 ? true : undefined),
    {
      timeoutMs,
      intervalMs: 250
    }
  )
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
const controllerConfig = (): ControllerConfig => {
  const r = decodeConfig({
    cloudProvider: "aws",
    namespace: ns,
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL}=${POOL}`,
    policies: [
      { conditionType: "KernelReady", status: "False", tolerationSeconds: 3 },
      { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 3, action: "Reboot" }
    ],
    reboot: { settleSeconds: 2, timeoutSeconds: 60 },
    drain: {
      deadlineSeconds: 30,
      onDeadline: "force",
      evictionBackoffInitialMs: 200,
      evictionBackoffMaxMs: 1000
    },
    zonalShift: { refreshSeconds: 1, scope: "cluster", onUnknown: "standDown" },
    breaker: { requeueSeconds: 2 },
    leaderElection: { enabled: false },
    replacement: { timeoutSeconds: 90 },
    resyncSeconds: 30,
    aws: {
      region: "us-west-2",
      clusterArn: CLUSTER_ARN,
      endpoints: { ec2: cloud.url, arcZonalShift: cloud.url },
      zonalShift: { enabled: true, cacheSeconds: 1 },
      poolLabel: POOL_LABEL,
      terminationWaitSeconds: 20,
      requestTimeoutSeconds: 5
    }
  })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

beforeAll(async () => {
  // The default credential chain reads these first (no IMDS, no profile files).
  process.env.AWS_ACCESS_KEY_ID = "AKIDFAKEE2E"
  process.env.AWS_SECRET_ACCESS_KEY = "fake-secret"
  ns = await createTestNamespace(core, "awsctl")
  cloud = await startClusterFakeCloud(kc, core)

  // The pool: 5 instances launched through EC2 RunInstances (as a node group would), one per zone round-robin.
  const ec2 = new Ec2Sdk.EC2Client({
    region: "us-west-2",
    endpoint: cloud.url,
    credentials: { accessKeyId: "AKIDFAKEE2E", secretAccessKey: "fake-secret" }
  })
  const subnets = ["subnet-0fake00000000000a", "subnet-0fake00000000000b", "subnet-0fake00000000000c"]
  for (let i = 0; i < 5; i++) {
    const out = await ec2.send(
      new Ec2Sdk.RunInstancesCommand({
        MinCount: 1,
        MaxCount: 1,
        LaunchTemplate: { LaunchTemplateId: "lt-0123456789abcdef0", Version: "1" },
        InstanceType: "p5.48xlarge",
        SubnetId: subnets[i % 3],
        TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: POOL_LABEL, Value: POOL }] }]
      })
    )
    nodes.push(out.Instances![0]!.PrivateDnsName!)
  }
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
  const awsConfig = await Effect.runPromise(decodeAwsConfig(config.aws))
  const kube = makeKube(loadKubeAccess(kubeconfigPath()).access, `aws-e2e-${process.pid}`)
  controller = Effect.runFork(
    startController(config, kube).pipe(
      Effect.andThen(Effect.never),
      Effect.provide(
        Layer.mergeAll(AwsCloudProvider.layer(awsConfig), noLogCaptureLayer).pipe(
          Layer.provide(Layer.succeed(Kube, Kube.of(kube)))
        )
      ),
      Effect.scoped
    )
  )
}, 120_000)

afterAll(async () => {
  if (controller) await Effect.runPromise(Fiber.interrupt(controller))
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
    await setKernelReady(target, "False")
    await waitForEvent(target, "RepairStarted")
    await waitForNodeGone(core, target)
    await waitForEvent(target, "RepairSucceeded", 90_000)
    const stats = await cloud.admin.stats()
    expect(stats.terminationsStarted[id]).toBe(1)
    expect(stats.launches - launchesBefore).toBe(1)
    const replacement = cloud.store.describe([]).find((i) => i.tags["nodemend.io/replaces"] === id)!
    expect(replacement.tags[POOL_LABEL]).toBe(POOL)
    expect(await ready(replacement.nodeName)).toBe(true)
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
})
