/**
 * A fleet for reliability trials: a fake cloud (in this process) whose instances are kwok Nodes in the real
 * test cluster, pools launched through EC2 RunInstances, the real controller binary (a child process, so it
 * can be SIGKILLed) with `cloudProvider: aws` against it, and the invariants every trial ends with:
 *   - no instance terminated twice, and none but the broken ones terminated (healthy capacity untouched);
 *   - no orphaned instance (every running instance has its Node) and exactly one replacement per repair;
 *   - no repair taint on any node that is not under repair (checked while the trial runs, not only at its end);
 *   - every repair ended: Succeeded (journal gone, RepairSucceeded) or Failed with a reason in the journal.
 */
import type { CoreV1Api, PolicyV1Api } from "@kubernetes/client-node"
import { createTestPod, kubeconfigPath, patchNodeCondition, waitFor } from "@nodemend/cluster-harness"
import {
  AdminClient,
  type FakeCloud,
  type FakeCloudOptions,
  kwokNodeMirror,
  startFakeCloud
} from "@nodemend/fake-cloud"
import { kubeAccessFromKubeconfig, makeKubeHttp } from "@nodemend/kube-access"
import { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import { type ControllerProcess, startControllerProcess } from "../integration/controllerProcess.ts"
import { createPdb, isReady, isTainted, sleep } from "../integration/helpers.ts"

export { LONG, pick, recordFigures } from "./figures.ts"

export const POOL_LABEL = "karpenter.sh/nodepool"
const REGION = "us-west-2"
const CREDENTIALS = { accessKeyId: "AKIDFAKERELIABILITY", secretAccessKey: "fake-secret" }

/** The controller child process reads these through the AWS SDK's default chain (no IMDS, no profile). */
export const useFakeCredentials = () => {
  process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey
  process.env.AWS_EC2_METADATA_DISABLED = "true"
}

export interface Fleet {
  readonly cloud: FakeCloud
  readonly admin: AdminClient
  /** Node names by pool, as launched. */
  readonly pools: Record<string, string[]>
  readonly instanceOf: (node: string) => { instanceId: string; state: string }
  readonly stop: (core: CoreV1Api) => Promise<void>
}

export const startFleet = async (
  core: CoreV1Api,
  poolNames: ReadonlyArray<string>,
  size: number,
  options: Partial<FakeCloudOptions> = {}
): Promise<Fleet> => {
  const cloud = await startFakeCloud({
    region: REGION,
    bootDelayMs: 300,
    terminateDelayMs: 300,
    mirror: kwokNodeMirror(
      makeKubeHttp(kubeAccessFromKubeconfig(kubeconfigPath()), { userAgent: "nodemend-fake-cloud" }),
      REGION
    ),
    log: () => undefined,
    ...options
  })
  const ec2 = new Ec2Sdk.EC2Client({ region: REGION, endpoint: cloud.url, credentials: CREDENTIALS })
  const pools: Record<string, string[]> = {}
  try {
    for (const [i, pool] of poolNames.entries()) {
      const out = await ec2.send(
        new Ec2Sdk.RunInstancesCommand({
          MinCount: size,
          MaxCount: size,
          LaunchTemplate: { LaunchTemplateId: "lt-0123456789abcdef0", Version: "1" },
          InstanceType: "p5.48xlarge",
          SubnetId: ["subnet-0fake00000000000a", "subnet-0fake00000000000b", "subnet-0fake00000000000c"][
            i % 3
          ],
          TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: POOL_LABEL, Value: pool }] }]
        })
      )
      pools[pool] = (out.Instances ?? []).map((x) => x.PrivateDnsName ?? "")
    }
  } finally {
    ec2.destroy()
  }
  const all = Object.values(pools).flat()
  await waitFor(
    `${all.length} kwok Nodes Ready`,
    async () => {
      const ready = await Promise.all(all.map((n) => core.readNode({ name: n }).then(isReady, () => false)))
      return ready.every(Boolean) ? true : undefined
    },
    { timeoutMs: 400_000, intervalMs: 1000 }
  )
  const stop = async (c: CoreV1Api) => {
    const names = new Set(cloud.store.describe([]).map((x) => x.nodeName))
    await Promise.all([...names].map((name) => c.deleteNode({ name }).catch(() => undefined)))
    await cloud.close()
  }
  const instanceOf = (node: string) => {
    const i = cloud.store.describe([]).find((x) => x.nodeName === node)
    if (i === undefined) throw new Error(`no instance for ${node}`)
    return { instanceId: i.instanceId, state: i.state }
  }
  return { cloud, admin: new AdminClient(cloud.url), pools, instanceOf, stop }
}

/** The controller's config for a trial: second-scale timings, the given pools, `cloudProvider: aws`. */
export const trialConfig = (
  namespace: string,
  ec2Endpoint: string,
  pools: ReadonlyArray<string>,
  over: Record<string, unknown> = {},
  awsOver: Record<string, unknown> = {}
) => ({
  cloudProvider: "aws",
  namespace,
  poolLabel: POOL_LABEL,
  nodeSelector: `${POOL_LABEL} in (${pools.join(",")})`,
  policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 2, captureLogs: true }],
  drain: {
    deadlineSeconds: 3,
    onDeadline: "force",
    evictionBackoffInitialMs: 200,
    evictionBackoffMaxMs: 500
  },
  breaker: { requeueSeconds: 2 },
  leaderElection: { enabled: false },
  replacement: { timeoutSeconds: 60 },
  retry: { maxAttempts: 5, initialBackoffSeconds: 0.5, maxBackoffSeconds: 4 },
  resyncSeconds: 30,
  ...over,
  aws: {
    region: REGION,
    endpoints: { ec2: ec2Endpoint },
    zonalShift: { enabled: false },
    terminationWaitSeconds: 10,
    requestTimeoutSeconds: 3,
    maxAttempts: 3,
    ...awsOver
  }
})

export const setKernelReady = (core: CoreV1Api, name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status,
    reason: status === "False" ? "ForkFailedOutOfPIDs" : "KernelIsReady",
    message: status === "False" ? "fork failed: out of PIDs (reliability)" : "kernel ok",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

/** Two pods on `node` behind a PDB that allows no eviction: the drain runs eviction rounds until its deadline. */
export const blockDrain = async (
  core: CoreV1Api,
  policy: PolicyV1Api,
  ns: string,
  node: string,
  app: string
) => {
  await Promise.all(
    [0, 1].map(() => createTestPod(core, ns, { bindTo: node, tolerations: [], labels: { app } }))
  )
  await createPdb(policy, ns, app, 2)
}

/** Journal phases by node name (the controller's ConfigMaps in `ns`). */
export const journalPhases = async (
  core: CoreV1Api,
  ns: string
): Promise<Record<string, { phase: string; failure?: string }>> => {
  const l = await core.listNamespacedConfigMap({
    namespace: ns,
    labelSelector: "nodemend.io/repair-journal=true"
  })
  const out: Record<string, { phase: string; failure?: string }> = {}
  for (const cm of l.items) {
    const name = cm.metadata?.name?.replace(/^nodemend-repair-/, "") ?? ""
    const record = cm.data?.record
    if (record === undefined) continue
    const r = JSON.parse(record) as { phase: string; failure?: string }
    out[name] = r.failure === undefined ? { phase: r.phase } : { phase: r.phase, failure: r.failure }
  }
  return out
}

/** Records every node of `pools` that carries the repair taint while it runs; `stop` returns the set. */
export const watchTaints = (core: CoreV1Api, pools: ReadonlyArray<string>) => {
  const seen = new Set<string>()
  let running = true
  const loop = (async () => {
    while (running) {
      const l = await core
        .listNode({ labelSelector: `${POOL_LABEL} in (${pools.join(",")})` })
        .catch(() => undefined)
      for (const n of l?.items ?? []) if (isTainted(n)) seen.add(n.metadata?.name ?? "")
      await sleep(250)
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return seen
    }
  }
}

export interface Target {
  readonly node: string
  readonly instanceId: string
  readonly pool: string
}

export interface Outcome {
  readonly violations: string[]
  readonly succeeded: number
  readonly failed: Array<{ node: string; failure: string }>
  readonly calls: Record<string, number>
}

/** Checks the fleet's end state against the invariants in this file's header. */
export const checkFleet = async (
  core: CoreV1Api,
  ns: string,
  fleet: Fleet,
  targets: ReadonlyArray<Target>,
  taintedDuringRun: ReadonlySet<string>,
  { allowFailed = false }: { allowFailed?: boolean } = {}
): Promise<Outcome> => {
  const violations: string[] = []
  const stats = await fleet.admin.stats()
  const instances = fleet.cloud.store.describe([])
  const targetIds = new Set(targets.map((t) => t.instanceId))
  const journals = await journalPhases(core, ns)
  for (const [id, n] of Object.entries(stats.terminationsStarted)) {
    if (!targetIds.has(id)) violations.push(`healthy instance ${id} terminated ${n}x`)
    else if (n > 1) violations.push(`instance ${id} terminated ${n}x`)
  }
  let succeeded = 0
  const failed: Array<{ node: string; failure: string }> = []
  for (const t of targets) {
    const j = journals[t.node]
    const replacements = instances.filter((i) => i.tags["nodemend.io/replaces"] === t.instanceId)
    if (j === undefined) {
      succeeded++
      if (stats.terminationsStarted[t.instanceId] !== 1)
        violations.push(
          `${t.node}: succeeded with ${stats.terminationsStarted[t.instanceId] ?? 0} terminations`
        )
      if (replacements.length !== 1) violations.push(`${t.node}: ${replacements.length} replacements`)
    } else if (j.phase === "Failed" && allowFailed) {
      failed.push({ node: t.node, failure: j.failure ?? "" })
      if (j.failure === undefined || j.failure === "") violations.push(`${t.node}: Failed without a reason`)
      if (replacements.length > 1) violations.push(`${t.node}: ${replacements.length} replacements`)
    } else violations.push(`${t.node}: repair did not end (${j.phase}${j.failure ? `: ${j.failure}` : ""})`)
  }
  for (const i of instances) {
    if (i.state !== "running" && i.state !== "pending") continue
    const node = await core.readNode({ name: i.nodeName }).catch(() => undefined)
    if (node === undefined)
      violations.push(`orphaned instance ${i.instanceId} (${i.state}, no Node ${i.nodeName})`)
    else if (isTainted(node) && journals[i.nodeName] === undefined)
      violations.push(`${i.nodeName} tainted with no repair in flight`)
  }
  const targetNodes = new Set(targets.map((t) => t.node))
  for (const n of taintedDuringRun) if (!targetNodes.has(n)) violations.push(`healthy node ${n} was tainted`)
  return { violations, succeeded, failed, calls: stats.calls }
}

/** Starts the controller on `config` and keeps a handle; `killAll` SIGKILLs every one started. */
export const controllers = (kubeconfig: string) => {
  const running: ControllerProcess[] = []
  return {
    start: async (config: unknown, identity?: string) => {
      const p = await startControllerProcess(kubeconfig, config, identity)
      running.push(p)
      return p
    },
    /** As `start`, through another kubeconfig (a proxy's). */
    startWith: async (path: string, config: unknown, identity?: string) => {
      const p = await startControllerProcess(path, config, identity)
      running.push(p)
      return p
    },
    killAll: async (printLogs: boolean) => {
      for (const p of running.splice(0)) {
        if (printLogs) console.log(`--- ${p.identity} ---\n${p.logs().slice(-4000)}`)
        await p.kill("SIGKILL")
      }
    }
  }
}

/** Waits until every target's repair has ended (no journal entry, or a Failed one). */
export const waitForAllEnded = (
  core: CoreV1Api,
  ns: string,
  targets: ReadonlyArray<Target>,
  timeoutMs: number
) =>
  waitFor(
    "every repair ended",
    async () => {
      const j = await journalPhases(core, ns)
      const open = targets.filter((t) => j[t.node] !== undefined && j[t.node]?.phase !== "Failed")
      const gone = await Promise.all(
        targets.map((t) =>
          j[t.node] === undefined
            ? core.readNode({ name: t.node }).then(
                () => false,
                () => true
              )
            : true
        )
      )
      return open.length === 0 && gone.every(Boolean) ? true : undefined
    },
    { timeoutMs, intervalMs: 500 }
  )

export const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo)
