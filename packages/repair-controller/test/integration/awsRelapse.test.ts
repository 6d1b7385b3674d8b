// Relapse holds on the AWS path (#28 part 1): the real controller with `cloudProvider: aws` (composed as main.ts
// composes it) against the fake cloud, whose instances are kwok Nodes. The pool's launch template is broken (the
// fake cloud's switch, `template break`): every instance launched from it from then on (RunInstances, the
// replacement of a repaired node) comes up Ready and then with the fault its original was repaired for. After 2
// relapses the controller holds the next repair of that reason in the pool: no more terminations or launches;
// `kubectl nodemend release` (the plugin, run as a user would) lifts it once the template is mended.
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  kubeconfigPath,
  patchNodeCondition,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
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
  isReady,
  nodeEvents,
  readNodeOrUndefined,
  sleep,
  waitForEvent,
  waitForHeldReplacement
} from "./helpers.ts"

const { core } = clients()
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")
const PLUGIN = join(ROOT, "packages/kubectl-nodemend/src/main.ts")
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("awsrelapse").slice(0, 40)
const BROKEN_LT = "lt-0badbadbadbadbad0"
const REASON = "ForkFailedOutOfPIDs"
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined
const nodes: string[] = []

const setKernelReady = (name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status,
    reason: status === "False" ? REASON : "KernelIsReady",
    message: "aws relapse e2e",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "awsrelapse")
  cloud = await startClusterFakeCloud(core)
  const ec2 = fakeEc2(cloud.url)
  // The pool: 4 instances from the (broken) launch template, in one zone.
  for (let i = 0; i < 4; i++)
    nodes.push(
      await runPoolInstance(ec2, {
        subnet: FAKE_SUBNETS[0],
        pool: [POOL_LABEL, POOL],
        instanceType: "p5.48xlarge",
        launchTemplateId: BROKEN_LT
      })
    )
  ec2.destroy()
  await waitFor(
    "the pool's 4 kwok Nodes Ready",
    async () => {
      const ready = await Promise.all(nodes.map(async (n) => isReady(await readNodeOrUndefined(core, n))))
      return ready.every(Boolean) ? true : undefined
    },
    { timeoutMs: 100_000 }
  )
  const config = awsTestConfig(ns, cloud.url, {
    poolLabel: POOL_LABEL,
    nodeSelector: `${POOL_LABEL}=${POOL}`,
    // The toleration outlasts a repair, so each relapse is on record before the relapsed node falls due.
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 12 }],
    maxUnhealthyPercent: 100,
    maxInFlight: "100%",
    relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 }
  })
  controller = await startAwsController(config, "aws-relapse")
}, 120_000)

afterAll(async () => {
  await stopController(controller)
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

describe("relapse hold with cloudProvider: aws", () => {
  it("replacements launched from a broken launch template relapse: held after 2, no more launches; released by kubectl nodemend release", async () => {
    await cloud.admin.breakLaunchTemplate(BROKEN_LT, {
      type: "KernelReady",
      status: "False",
      reason: REASON,
      message: "fork failed: out of PIDs (broken launch template)"
    })
    const faulted = () =>
      cloud.store
        .describe([])
        .filter((i) => i.tags["nodemend.io/replaces"] !== undefined && i.fault !== undefined)
        .map((i) => i.nodeName)
    try {
      await setKernelReady(nodes[0]!, "False")
      const held = await waitForHeldReplacement(core, faulted, 180_000)
      expect(held.message).toMatch(
        new RegExp(
          `2 nodes of pool ${POOL} came back with ${REASON} within 10m of a repair \\(threshold 2\\)`
        )
      )
      // The first relapse is the first repair's own replacement, known to the ledger by its instance id.
      expect(held.message).toMatch(/replacement ip-\S+ of ip-\S+ relapsed \d+s after it came up \(repair /)
      // Held: the controller launches and terminates nothing more.
      const before = await cloud.admin.stats()
      await sleep(6000)
      const after = await cloud.admin.stats()
      expect(after.launches).toBe(before.launches)
      expect(Object.keys(after.terminationsStarted).length).toBe(
        Object.keys(before.terminationsStarted).length
      )
      expect((await nodeEvents(core, held.node, "RepairStarted")).length).toBe(0)

      // The launch template is mended; an operator releases the hold.
      await cloud.admin.mendLaunchTemplate(BROKEN_LT)
      const out = await promisify(execFile)(
        NODE,
        [
          "--conditions=source",
          PLUGIN,
          "release",
          POOL,
          REASON,
          "--kubeconfig",
          kubeconfigPath(),
          "--controller-namespace",
          ns
        ],
        { cwd: ROOT }
      )
      expect(out.stdout).toContain(`deleted the relapse ledger of ${REASON} in ${POOL}`)
      await waitForEvent(core, held.node, "RepairSucceeded", 120_000)
    } finally {
      await cloud.admin.mendLaunchTemplate(BROKEN_LT)
    }
  }, 300_000)
})
