// Helpers for integration tests against the real local cluster started by ./globalSetup.ts.
// Tests isolate themselves: one namespace per test file/case, Nodes labelled with this run's id.
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Node,
  type V1NodeCondition,
  type V1Pod,
  type V1Taint,
  type V1Toleration
} from "@kubernetes/client-node"
import { errorCode, RUN_ID, TEST_RUN_LABEL, uniqueName } from "./testRun.ts"
import { type WaitOptions, waitFor } from "./waitFor.ts"

/** kwok only animates Nodes carrying this label (see tools/cluster/cluster.mjs). */
export const FAKE_NODE_LABEL = "kwok.x-k8s.io/node"
export const FAKE_NODE_VALUE = "fake"
/**
 * A Go duration: kwok reports this Node's status that often instead of every 5 min (tools/cluster/kwok/stages.yaml;
 * its liveness is its Lease either way).
 */
export const KWOK_HEARTBEAT_INTERVAL_ANNOTATION = "nodemend.io/kwok-heartbeat-interval"

/**
 * Kubeconfig of the cluster for this test run: NODEMEND_KUBECONFIG, which ./globalSetup.ts sets before
 * test workers start (and which a developer can point at `npm run cluster:up`'s .nodemend/kubeconfig).
 */
export function kubeconfigPath(): string {
  const path = process.env.NODEMEND_KUBECONFIG
  if (!path) {
    throw new Error(
      "no cluster: add @nodemend/cluster-harness/globalSetup to vitest globalSetup or set NODEMEND_KUBECONFIG"
    )
  }
  return path
}

export interface Clients {
  kc: KubeConfig
  core: CoreV1Api
  policy: PolicyV1Api
}

export function clients(path: string = kubeconfigPath()): Clients {
  const kc = new KubeConfig()
  kc.loadFromFile(path)
  return { kc, core: kc.makeApiClient(CoreV1Api), policy: kc.makeApiClient(PolicyV1Api) }
}

export { errorCode, RUN_ID, TEST_RUN_LABEL, uniqueName } from "./testRun.ts"
export { type WaitOptions, waitFor } from "./waitFor.ts"

/** Creates a namespace labelled with the run id; returns its name. */
export async function createTestNamespace(core: CoreV1Api, prefix = "t"): Promise<string> {
  const name = uniqueName(prefix)
  await core.createNamespace({ body: { metadata: { name, labels: { [TEST_RUN_LABEL]: RUN_ID } } } })
  return name
}

export async function deleteNamespace(core: CoreV1Api, name: string): Promise<void> {
  await core.deleteNamespace({ name }).catch((e: unknown) => {
    if (errorCode(e) !== 404) throw e
  })
}

export interface FakeNodeOptions {
  name?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  taints?: V1Taint[]
  capacity?: Record<string, string>
  /** false: a Node kwok does not manage (no heartbeats; kube-controller-manager will mark it Unknown). */
  managed?: boolean
}

/** Creates a Node that kwok animates (status, heartbeats, pods). Returns the created Node. */
export async function createFakeNode(core: CoreV1Api, opts: FakeNodeOptions = {}): Promise<V1Node> {
  const name = opts.name ?? uniqueName("kwok-node")
  const capacity = opts.capacity ?? { cpu: "32", memory: "256Gi", pods: "110" }
  const managed = opts.managed ?? true
  const fake: Record<string, string> = managed ? { [FAKE_NODE_LABEL]: FAKE_NODE_VALUE } : {}
  const node = await core.createNode({
    body: {
      metadata: {
        name,
        labels: {
          "kubernetes.io/hostname": name,
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          "node.kubernetes.io/instance-type": "kwok",
          type: "kwok",
          [TEST_RUN_LABEL]: RUN_ID,
          ...fake,
          ...opts.labels
        },
        annotations: { ...fake, "node.alpha.kubernetes.io/ttl": "0", ...opts.annotations }
      },
      spec: { taints: opts.taints ?? [] },
      status: { capacity, allocatable: capacity }
    }
  })
  if (managed) {
    // kwok's node-initialize stage only patches status; seed it too so the scheduler sees capacity immediately.
    await core
      .patchNodeStatus(
        { name, body: { status: { capacity, allocatable: capacity } } },
        setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
      )
      .catch(() => undefined)
  }
  return node
}

/**
 * Creates a Node that kwok animates and waits until kwok reports it Ready: kwok writes the Node's status
 * first, so a writer started after this does not race it. Slow when other suites load the cluster.
 */
export async function createReadyFakeNode(
  core: CoreV1Api,
  opts: FakeNodeOptions = {},
  { timeoutMs = 200_000 }: WaitOptions = {}
): Promise<V1Node> {
  const node = await createFakeNode(core, opts)
  return waitForNodeCondition(core, node.metadata?.name ?? "", "Ready", "True", { timeoutMs })
}

export async function deleteNode(core: CoreV1Api, name: string): Promise<void> {
  await core.deleteNode({ name }).catch((e: unknown) => {
    if (errorCode(e) !== 404) throw e
  })
}

/**
 * Deletes the Nodes `labelSelector` selects with DELETEs of the collection, `page` at a time: thousands of single
 * deletes at once (a bench's 5,000 Nodes) exhaust client-node's per-request connections, and one DELETE of 5,000
 * ran past the API server's 60 s request timeout under the bench's load (it resets the stream). Nodes already being
 * deleted (Karpenter's, held by its finalizer) are left to their owner.
 */
export async function deleteNodes(core: CoreV1Api, labelSelector: string, page = 500): Promise<void> {
  const standing = async () =>
    (await core.listNode({ labelSelector })).items.filter((n) => n.metadata?.deletionTimestamp === undefined)
      .length
  let left = await standing()
  for (let rounds = Math.ceil(left / page) + 3; left > 0; left = await standing()) {
    if (rounds-- === 0) throw new Error(`${left} Nodes (${labelSelector}) are still not deleted`)
    await core.deleteCollectionNode({ labelSelector, limit: page })
  }
}

/** Deletes every Node created by this run (label TEST_RUN_LABEL=RUN_ID). */
export const deleteRunNodes = (core: CoreV1Api): Promise<void> =>
  deleteNodes(core, `${TEST_RUN_LABEL}=${RUN_ID}`)

export function condition(node: V1Node, type: string): V1NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type)
}

/** Waits until the Node has condition `type` with `status` (default Ready=True). */
export function waitForNodeCondition(
  core: CoreV1Api,
  name: string,
  type = "Ready",
  status = "True",
  opts?: WaitOptions
): Promise<V1Node> {
  return waitFor(
    `node ${name} ${type}=${status}`,
    async () => {
      const n = await core.readNode({ name })
      return condition(n, type)?.status === status ? n : undefined
    },
    opts
  )
}

/** Strategic-merge-patches one condition into Node status (merges by type; other conditions are kept). */
export function patchNodeCondition(core: CoreV1Api, name: string, cond: V1NodeCondition): Promise<V1Node> {
  return core.patchNodeStatus(
    { name, body: { status: { conditions: [cond] } } },
    setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
  )
}

/** Toleration for the taints kwok nodes commonly carry in tests. */
export const TOLERATE_ALL: V1Toleration[] = [{ operator: "Exists" }]

export interface TestPodOptions {
  name?: string
  labels?: Record<string, string>
  /** Pin to a node via nodeSelector (goes through the real scheduler). */
  nodeName?: string
  /** Bind directly via spec.nodeName (bypasses the scheduler). */
  bindTo?: string
  tolerations?: V1Toleration[]
}

/** Creates a pod meant for kwok nodes (kwok makes it Running; nothing is actually executed). */
export function createTestPod(core: CoreV1Api, namespace: string, opts: TestPodOptions = {}): Promise<V1Pod> {
  const name = opts.name ?? uniqueName("pod")
  return core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: { [TEST_RUN_LABEL]: RUN_ID, ...opts.labels } },
      spec: {
        containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }],
        nodeSelector: opts.nodeName ? { "kubernetes.io/hostname": opts.nodeName } : undefined,
        nodeName: opts.bindTo,
        tolerations: opts.tolerations ?? TOLERATE_ALL,
        terminationGracePeriodSeconds: 0
      }
    }
  })
}

export function waitForPodPhase(
  core: CoreV1Api,
  namespace: string,
  name: string,
  phase = "Running",
  opts?: WaitOptions
): Promise<V1Pod> {
  return waitFor(
    `pod ${namespace}/${name} phase ${phase}`,
    async () => {
      const p = await core.readNamespacedPod({ name, namespace })
      return p.status?.phase === phase ? p : undefined
    },
    opts
  )
}

// The local Karpenter (kwok provider): NodePools, NodeClaims, provisioning and cleanup.
export * from "./karpenter.ts"
