/**
 * Part E of bench/karpenter/side-by-side.ts: nodemend's AWS path against the fake cloud (its instances are kwok Nodes
 * of the bench's cluster), the controller composed in this process as main.ts composes it for `cloudProvider: aws`
 * (by the AWS cluster tests' fixture, packages/repair-controller/test/integration/awsController.ts), capacity first
 * (the default): a standalone instance (replacement by RunInstances from its launch template, Ready before the drain)
 * and an Auto Scaling group member (group grown to desired+1, the new member Ready before the drain, then terminated
 * with decrement), KernelReady=False on one node of each at the same instant, toleration 30 s.
 * Times are taken when seen through a Node watch, from the condition's lastTransitionTime.
 */
import { type CoreV1Api, type V1Node, Watch } from "@kubernetes/client-node"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  patchNodeCondition,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import {
  awsTestConfig,
  type ControllerFiber,
  FAKE_SUBNETS,
  fakeEc2,
  runPoolInstance,
  startAwsController,
  stopController,
  useFakeCredentials
} from "../../packages/repair-controller/test/integration/awsController.ts"
import { startClusterFakeCloud } from "../../packages/repair-controller/test/integration/awsFakeCloudSupport.ts"

export interface AwsFigure {
  owner: string
  tainted?: number
  replacementReady?: number
  oldGone?: number
  launches: string
}

const POOL_LABEL = "nodemend.io/pool"
const SIZE = 3
const TOLERATION_S = 30

export async function run(core: CoreV1Api): Promise<AwsFigure[]> {
  const log = (m: string) => process.stderr.write(`[bench aws] ${m}\n`)
  useFakeCredentials()
  const { kc } = clients()
  const ns = await createTestNamespace(core, "kr-aws")
  const STANDALONE = uniqueName("bench-ec2").slice(0, 40)
  const GROUP = uniqueName("bench-asg").slice(0, 40)
  const cloud = await startClusterFakeCloud(core)
  let controller: ControllerFiber | undefined

  // Node observation
  const seen = new Map<
    string,
    { pool: string; first: number; ready?: number; tainted?: number; gone?: number }
  >()
  let watching = true
  const watcher = (async () => {
    const w = new Watch(kc)
    while (watching) {
      await new Promise<void>((resolve) => {
        w.watch(
          "/api/v1/nodes",
          { labelSelector: `${POOL_LABEL} in (${STANDALONE},${GROUP})` },
          (type, n: V1Node) => {
            const name = n.metadata?.name ?? ""
            const now = Date.now()
            let s = seen.get(name)
            if (!s) {
              s = { pool: n.metadata?.labels?.[POOL_LABEL] ?? "", first: now }
              seen.set(name, s)
            }
            if (
              s.ready === undefined &&
              n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
            )
              s.ready = now
            if (s.tainted === undefined && n.spec?.taints?.some((t) => t.key === "nodemend.io/repair"))
              s.tainted = now
            if (type === "DELETED") s.gone = now
          },
          () => resolve()
        ).catch(() => resolve())
      })
      if (watching) await new Promise((r) => setTimeout(r, 200))
    }
  })()

  try {
    // a standalone pool: instances launched by RunInstances from a launch template
    const ec2 = fakeEc2(cloud.url)
    const standalone: string[] = []
    for (let i = 0; i < SIZE; i++)
      standalone.push(
        await runPoolInstance(ec2, { subnet: FAKE_SUBNETS[i % 2]!, pool: [POOL_LABEL, STANDALONE] })
      )
    ec2.destroy()
    // an Auto Scaling group pool
    await cloud.createGroup(GROUP, SIZE, { [POOL_LABEL]: GROUP })
    const members = async () => (await cloud.admin.autoScalingGroup(GROUP)).members.map((m) => m.nodeName)
    await waitFor(
      "the fake cloud's Nodes Ready",
      async () => {
        const names = [...standalone, ...(await members())]
        return names.length === 2 * SIZE && names.every((n) => seen.get(n)?.ready !== undefined)
          ? true
          : undefined
      },
      { timeoutMs: 120_000, intervalMs: 300 }
    )

    // The cluster tests' config with the bench's slower timings (the figures in docs/performance.md were taken so).
    const config = awsTestConfig(
      ns,
      cloud.url,
      {
        poolLabel: POOL_LABEL,
        nodeSelector: `${POOL_LABEL} in (${STANDALONE},${GROUP})`,
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: TOLERATION_S }],
        drain: {
          deadlineSeconds: 60,
          onDeadline: "force",
          evictionBackoffInitialMs: 200,
          evictionBackoffMaxMs: 2000
        },
        zonalShift: { refreshSeconds: 5, scope: "cluster", onUnknown: "standDown" },
        breaker: { requeueSeconds: 5 },
        replacement: { timeoutSeconds: 120 }
      },
      { autoScaling: cloud.url },
      { zonalShift: { enabled: true, cacheSeconds: 5 }, terminationWaitSeconds: 30 }
    )
    controller = await startAwsController(config, "bench-aws")
    await new Promise((r) => setTimeout(r, 5000)) // initial sync

    const statsBefore = await cloud.admin.stats()
    const targets = { [STANDALONE]: standalone[0] ?? "", [GROUP]: (await members())[0] ?? "" }
    const at = new Date()
    log(`fault on ${JSON.stringify(targets)}`)
    await Promise.all(
      Object.values(targets).map((n) =>
        patchNodeCondition(core, n, {
          type: "KernelReady",
          status: "False",
          reason: "ForkFailedOutOfPIDs",
          message: "side-by-side bench (aws)",
          lastHeartbeatTime: at,
          lastTransitionTime: at
        })
      )
    )
    const t0 = at.getTime()
    const replacementOf = (pool: string) =>
      [...seen.values()].filter((s) => s.pool === pool && s.first >= t0 && s.ready !== undefined)[0]
    await waitFor(
      "both old Nodes gone and replacements Ready",
      async () =>
        Object.entries(targets).every(([pool, n]) => seen.get(n)?.gone !== undefined && replacementOf(pool))
          ? true
          : undefined,
      { timeoutMs: 150_000, intervalMs: 300 }
    ).catch((e) => log(String(e)))
    const stats = await cloud.admin.stats()
    const rel = (x: number | undefined) => (x === undefined ? undefined : x - t0)
    const fig = (owner: string, pool: string, launches: string): AwsFigure => ({
      owner,
      tainted: rel(seen.get(targets[pool] ?? "")?.tainted),
      replacementReady: rel(replacementOf(pool)?.ready),
      oldGone: rel(seen.get(targets[pool] ?? "")?.gone),
      launches
    })
    return [
      fig(
        "standalone EC2 instance (RunInstances)",
        STANDALONE,
        `RunInstances ${(stats.launchesBy.runInstances ?? 0) - (statsBefore.launchesBy.runInstances ?? 0)}`
      ),
      fig(
        "Auto Scaling group member (SetDesiredCapacity +1, then TerminateInstanceInAutoScalingGroup)",
        GROUP,
        `group launches ${(stats.launchesBy.autoScaling ?? 0) - (statsBefore.launchesBy.autoScaling ?? 0)}`
      )
    ]
  } finally {
    watching = false
    await stopController(controller)
    await cloud.stop().catch(() => {})
    await deleteNamespace(core, ns).catch(() => {})
    void watcher
  }
}
