// The replacement health gate with `cloudProvider: aws` (#41 item 1), for both AWS owners: a standalone instance
// (RunInstances from its launch template) and an Auto Scaling group member (replaced through its group). The real
// controller runs as main.ts composes it, against the fake cloud whose instances are kwok Nodes. The pool's launch
// template is broken (the fake cloud's switch) so that every replacement comes up either with a GPU fault (the
// agent's AcceleratedHardwareReady=False) or missing a GPU. In the second case the repaired node had lost the same
// GPU, so only the instance type's figure from EC2 DescribeInstanceTypes (p5.48xlarge: 8) catches it.
// In each case: no replacement is capacity, the pod never moves, the Events name the failed check, a second replacement
// is launched and fails too (replacement.maxAttempts 2), the repair fails with the node kept, and each failed
// replacement is a relapse in the repair's ledger.
import {
  clients,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  patchNodeCondition,
  uniqueName,
  waitFor,
  waitForPodPhase
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ledgerConfigMapName, parseLedger } from "../../src/domain/RelapseLedger.ts"
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
import { eventsSince, isReady, readNodeOrUndefined } from "./helpers.ts"

const { core } = clients()
const POOL_LABEL = "nodemend.io/pool"
const REASON = "NvidiaXID79Error"
const SIZE = 3
const STARTED = Date.now() - 2000
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "awsrhealth")
  cloud = await startClusterFakeCloud(core)
}, 60_000)
afterEach(async () => {
  await stopController(controller)
  controller = undefined
})
afterAll(async () => {
  if (cloud) await cloud.stop()
  await deleteNamespace(core, ns)
})

const gpuFault = (name: string) =>
  patchNodeCondition(core, name, {
    type: "AcceleratedHardwareReady",
    status: "False",
    reason: REASON,
    message: "GPU has fallen off the bus (test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

/** What the broken launch template gives its instances, and the check the gate must name. */
const DEFECTS = {
  "a GPU fault": {
    defect: { type: "AcceleratedHardwareReady", status: "False", reason: REASON, message: "XID 79 at boot" },
    failed: `AgentCondition: AcceleratedHardwareReady=False (${REASON})`
  },
  "a missing GPU": {
    defect: { missingGpus: 1 },
    failed: "GpuCapacity: nvidia.com/gpu capacity 7, expected 8 (p5.48xlarge promises 8, instance i-"
  }
} as const
type DefectName = keyof typeof DEFECTS

/** A pool of SIZE p5.48xlarge instances from `template`, as `owner` launches them; their Node names. */
const launchPool = async (owner: "standalone" | "autoScaling", pool: string, template: string) => {
  if (owner === "autoScaling") {
    // Room for the repair's two attempts.
    const g = await cloud.createGroup(
      pool,
      SIZE,
      { [POOL_LABEL]: pool },
      { instanceType: "p5.48xlarge", launchTemplateId: template, room: 2 }
    )
    return g.members.map((m) => m.nodeName)
  }
  const ec2 = fakeEc2(cloud.url)
  const names: string[] = []
  for (let i = 0; i < SIZE; i++)
    names.push(
      await runPoolInstance(ec2, {
        subnet: FAKE_SUBNETS[i % 2]!,
        pool: [POOL_LABEL, pool],
        instanceType: "p5.48xlarge",
        launchTemplateId: template
      })
    )
  ec2.destroy()
  return names
}

const startFor = async (pool: string) => {
  const config = awsTestConfig(
    ns,
    cloud.url,
    {
      poolLabel: POOL_LABEL,
      nodeSelector: `${POOL_LABEL}=${pool}`,
      // The toleration outlasts both attempts, so both relapses are on record (and hold the pool) before a broken
      // replacement's own repair falls due.
      policies: [
        {
          conditionType: "AcceleratedHardwareReady",
          status: "False",
          tolerationSeconds: 12,
          action: "Replace"
        }
      ],
      maxUnhealthyPercent: 100,
      maxInFlight: "100%",
      replacement: { timeoutSeconds: 90, healthTimeoutSeconds: 60, maxAttempts: 2 },
      relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 }
    },
    { autoScaling: cloud.url }
  )
  controller = await startAwsController(config, `awsrhealth-${pool}`)
}

const podsOn = async (node: string) =>
  (await core.listNamespacedPod({ namespace: ns, fieldSelector: `spec.nodeName=${node}` })).items

/** The broken replacements named by the ReplacementUnhealthy Events, in order. */
const failedNames = (messages: ReadonlyArray<string>) =>
  messages.map((m) => /replacement (\S+) is not capacity/.exec(m)?.[1] ?? "?")

const brokenReplacementsCase = async (owner: "standalone" | "autoScaling", which: DefectName) => {
  const pool = uniqueName(`awsrh-${owner === "standalone" ? "sa" : "asg"}`).slice(0, 40)
  const template = `lt-0${Math.floor(Math.random() * 0xfffffffff)
    .toString(16)
    .padStart(9, "0")}bad`
  const { defect, failed } = DEFECTS[which]
  // A missing GPU is already broken when the pool comes up: the repaired node has lost the same GPU, so the
  // record's figure (its capacity, 7) would pass the replacement; only the type's figure (8, from EC2) fails it.
  const missing = "missingGpus" in defect
  if (missing) await cloud.admin.breakLaunchTemplate(template, defect)
  const nodes = await launchPool(owner, pool, template)
  await waitFor(
    "the pool's kwok Nodes Ready",
    async () =>
      (await Promise.all(nodes.map(async (n) => isReady(await readNodeOrUndefined(core, n))))).every(Boolean),
    { timeoutMs: 100_000 }
  )
  const target = nodes[0]!
  if (missing)
    expect((await readNodeOrUndefined(core, target))?.status?.capacity?.["nvidia.com/gpu"]).toBe("7")
  const pod = await createTestPod(core, ns, { bindTo: target, tolerations: [] })
  await waitForPodPhase(core, ns, pod.metadata!.name!)
  if (!missing) await cloud.admin.breakLaunchTemplate(template, defect)
  const launchesBefore = (await cloud.admin.stats()).launches
  try {
    await startFor(pool)
    await gpuFault(target)

    await waitFor(
      "the repair failed after 2 broken replacements",
      async () => ((await eventsSince(core, target, "RepairFailed", STARTED)).length > 0 ? true : undefined),
      { timeoutMs: 150_000, intervalMs: 500 }
    )
    const unhealthy = (await eventsSince(core, target, "ReplacementUnhealthy", STARTED)).map(
      (e) => e.message ?? ""
    )
    expect(unhealthy).toHaveLength(2)
    for (const m of unhealthy) expect(m).toContain(failed)
    expect(unhealthy.some((m) => m.includes("launching another (1 of 2 attempts failed)"))).toBe(true)
    expect(unhealthy.some((m) => m.includes("no more replacements (replacement.maxAttempts 2)"))).toBe(true)
    const broken = failedNames(unhealthy)
    expect(new Set(broken).size).toBe(2)
    // Never capacity: no ReplacementReady, no drain; the pod is where it was, nothing of ours runs on them.
    expect(await eventsSince(core, target, "ReplacementReady", STARTED)).toEqual([])
    expect(await eventsSince(core, target, "Drained", STARTED)).toEqual([])
    const still = await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })
    expect([still.metadata?.uid, still.spec?.nodeName]).toEqual([pod.metadata?.uid, target])
    for (const b of broken) expect(await podsOn(b)).toEqual([])
    // Up to the bound: two launches, no third (the failed replacements' own repairs are held by the relapses).
    expect((await cloud.admin.stats()).launches - launchesBefore).toBe(2)
    // Each failed replacement is a relapse of the repair.
    const cm = await core.readNamespacedConfigMap({ namespace: ns, name: ledgerConfigMapName(pool, REASON) })
    const ledger = parseLedger(cm.data?.ledger ?? "")
    expect(ledger._tag).toBe("Success")
    if (ledger._tag === "Success")
      for (const b of broken)
        expect(ledger.success.relapses).toContainEqual(
          expect.objectContaining({ node: b, kind: "replacement", repairedNode: target })
        )
  } finally {
    await cloud.admin.mendLaunchTemplate(template)
  }
}

describe("replacement health gate, cloudProvider: aws", () => {
  for (const owner of ["standalone", "autoScaling"] as const)
    for (const which of Object.keys(DEFECTS) as DefectName[])
      it(
        `${owner}: replacements that come up with ${which} are never capacity; 2 attempts, then the repair fails`,
        () => brokenReplacementsCase(owner, which),
        240_000
      )
})
