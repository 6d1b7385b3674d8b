// Helpers for tests and benches against the local Karpenter (its kwok provider, started by tools/cluster/cluster.mjs
// `up` next to the control plane; Karpenter's own NodeRepair gate is on). `up` creates the KWOKNodeClass `default`
// and no NodePool: each test creates its own (distinct names), makes it provision Nodes with a Deployment, and
// deletes it (and its NodeClaims) afterwards.
//
// Karpenter provisions for any pending pod that tolerates a NodePool's taints, so every NodePool built here carries
// its own NoSchedule taint (`nodemend.io/karpenter-pool=<name>`): pods of other tests, which do not tolerate it, do
// not make this pool launch Nodes, nor land on its Nodes.
import {
  AppsV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type CoreV1Api,
  type KubernetesObject,
  type V1Deployment,
  type V1Node,
  type V1Taint,
  type V1Toleration
} from "@kubernetes/client-node"
import { errorCode, RUN_ID, TEST_RUN_LABEL } from "./testRun.ts"
import { type WaitOptions, waitFor } from "./waitFor.ts"

export const KARPENTER_GROUP = "karpenter.sh"
export const KARPENTER_VERSION = "v1"
export const NODEPOOL_LABEL = "karpenter.sh/nodepool"
export const NODECLAIM_FINALIZER = "karpenter.sh/termination"
export const DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
export const UNREGISTERED_TAINT = "karpenter.sh/unregistered"
export const DISRUPTED_TAINT = "karpenter.sh/disrupted"
/** The KWOKNodeClass the cluster tooling creates (tools/cluster/cluster.mjs KARPENTER_NODE_CLASS). */
export const KWOK_NODE_CLASS_REF = {
  group: "karpenter.kwok.sh",
  kind: "KWOKNodeClass",
  name: "default"
} as const
/** Key of the NoSchedule taint every NodePool built here carries (value: the NodePool's name). */
export const POOL_TAINT_KEY = "nodemend.io/karpenter-pool"

const NODEPOOLS = { group: KARPENTER_GROUP, version: KARPENTER_VERSION, plural: "nodepools" }
const NODECLAIMS = { group: KARPENTER_GROUP, version: KARPENTER_VERSION, plural: "nodeclaims" }

export interface Condition {
  type: string
  status: string
  reason?: string
  message?: string
  lastTransitionTime?: string
}

export interface NodeSelectorRequirement {
  key: string
  operator: string
  values?: string[]
  minValues?: number
}

export interface Budget {
  nodes: string
  reasons?: ("Underutilized" | "Empty" | "Drifted" | "Unhealthy")[]
  schedule?: string
  duration?: string
}

export interface NodePool extends KubernetesObject {
  spec: {
    template: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }
      spec: {
        nodeClassRef: { group: string; kind: string; name: string }
        requirements: NodeSelectorRequirement[]
        taints?: V1Taint[]
        startupTaints?: V1Taint[]
        expireAfter?: string
        terminationGracePeriod?: string
      }
    }
    disruption?: {
      budgets?: Budget[]
      consolidationPolicy?: "WhenEmpty" | "WhenEmptyOrUnderutilized" | "Balanced"
      consolidateAfter?: string
    }
    limits?: Record<string, string>
    weight?: number
  }
  status?: { conditions?: Condition[]; nodes?: number; resources?: Record<string, string> }
}

export interface NodeClaim extends KubernetesObject {
  spec: {
    nodeClassRef: { group: string; kind: string; name: string }
    requirements: NodeSelectorRequirement[]
    resources?: { requests?: Record<string, string> }
    taints?: V1Taint[]
    startupTaints?: V1Taint[]
    expireAfter?: string
    terminationGracePeriod?: string
  }
  status?: {
    conditions?: Condition[]
    nodeName?: string
    providerID?: string
    capacity?: Record<string, string>
    allocatable?: Record<string, string>
  }
}

export interface KarpenterClients {
  custom: CustomObjectsApi
  apps: AppsV1Api
}

export function karpenterClients(kc: KubeConfig): KarpenterClients {
  return { custom: kc.makeApiClient(CustomObjectsApi), apps: kc.makeApiClient(AppsV1Api) }
}

export interface NodePoolOptions {
  /** A ceiling on the pool's Nodes (`limits.nodes`). */
  nodes?: number
  /** Disruption budgets; Karpenter's default is one budget of 10% for every reason. */
  budgets?: Budget[]
  /** Labels of the pool's Nodes (template metadata). */
  labels?: Record<string, string>
  /** Annotations of the NodePool itself. */
  annotations?: Record<string, string>
  /** Further limits (cpu, memory, ...). */
  limits?: Record<string, string>
  /** Requirements in place of the default (linux, amd64, on-demand, 1-vCPU `c` instances). */
  requirements?: NodeSelectorRequirement[]
  /** Default WhenEmpty after Never: a test's Nodes stay until it removes them. */
  consolidationPolicy?: "WhenEmpty" | "WhenEmptyOrUnderutilized" | "Balanced"
  consolidateAfter?: string
  /** The NodeClaims' drain bound (spec.template.spec.terminationGracePeriod), e.g. "60s". */
  terminationGracePeriod?: string
}

/** The NoSchedule taint of a NodePool built here, and the toleration its pods need. */
export const poolTaint = (pool: string): V1Taint => ({
  key: POOL_TAINT_KEY,
  value: pool,
  effect: "NoSchedule"
})
export const poolToleration = (pool: string): V1Toleration => ({
  key: POOL_TAINT_KEY,
  operator: "Equal",
  value: pool,
  effect: "NoSchedule"
})

/** A NodePool manifest on the cluster's KWOKNodeClass, labelled with this run's id. */
export function karpenterNodePool(name: string, opts: NodePoolOptions = {}): NodePool {
  const limits = { ...opts.limits, ...(opts.nodes === undefined ? {} : { nodes: String(opts.nodes) }) }
  return {
    apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`,
    kind: "NodePool",
    metadata: {
      name,
      labels: { [TEST_RUN_LABEL]: RUN_ID },
      ...(opts.annotations ? { annotations: opts.annotations } : {})
    },
    spec: {
      template: {
        metadata: { labels: { [TEST_RUN_LABEL]: RUN_ID, ...opts.labels } },
        spec: {
          nodeClassRef: { ...KWOK_NODE_CLASS_REF },
          requirements: opts.requirements ?? [
            { key: "kubernetes.io/os", operator: "In", values: ["linux"] },
            { key: "kubernetes.io/arch", operator: "In", values: ["amd64"] },
            { key: "karpenter.sh/capacity-type", operator: "In", values: ["on-demand"] },
            { key: "karpenter.kwok.sh/instance-family", operator: "In", values: ["c"] },
            { key: "karpenter.kwok.sh/instance-cpu", operator: "In", values: ["1"] }
          ],
          taints: [poolTaint(name)],
          expireAfter: "Never",
          ...(opts.terminationGracePeriod ? { terminationGracePeriod: opts.terminationGracePeriod } : {})
        }
      },
      disruption: {
        consolidationPolicy: opts.consolidationPolicy ?? "WhenEmpty",
        consolidateAfter: opts.consolidateAfter ?? "Never",
        ...(opts.budgets ? { budgets: opts.budgets } : {})
      },
      ...(Object.keys(limits).length > 0 ? { limits } : {})
    }
  }
}

export async function createNodePool(custom: CustomObjectsApi, pool: NodePool): Promise<NodePool> {
  return (await custom.createClusterCustomObject({ ...NODEPOOLS, body: pool })) as NodePool
}

export async function getNodePool(custom: CustomObjectsApi, name: string): Promise<NodePool> {
  return (await custom.getClusterCustomObject({ ...NODEPOOLS, name })) as NodePool
}

export async function listNodeClaims(custom: CustomObjectsApi, pool?: string): Promise<NodeClaim[]> {
  const list = (await custom.listClusterCustomObject({
    ...NODECLAIMS,
    ...(pool === undefined ? {} : { labelSelector: `${NODEPOOL_LABEL}=${pool}` })
  })) as { items: NodeClaim[] }
  return list.items
}

export async function getNodeClaim(custom: CustomObjectsApi, name: string): Promise<NodeClaim | undefined> {
  try {
    return (await custom.getClusterCustomObject({ ...NODECLAIMS, name })) as NodeClaim
  } catch (e) {
    if (errorCode(e) === 404) return undefined
    throw e
  }
}

export async function createNodeClaim(custom: CustomObjectsApi, claim: NodeClaim): Promise<NodeClaim> {
  return (await custom.createClusterCustomObject({ ...NODECLAIMS, body: claim })) as NodeClaim
}

/** Deletes a NodeClaim (Karpenter's finalizer drains and removes its Node first); a missing one is fine. */
export async function deleteNodeClaim(custom: CustomObjectsApi, name: string): Promise<void> {
  await custom.deleteClusterCustomObject({ ...NODECLAIMS, name }).catch((e: unknown) => {
    if (errorCode(e) !== 404) throw e
  })
}

export function nodeClaimCondition(claim: NodeClaim, type: string): Condition | undefined {
  return claim.status?.conditions?.find((c) => c.type === type)
}

export interface NodeClaimCopyOptions {
  annotations?: Record<string, string>
  labels?: Record<string, string>
}

/**
 * A NodeClaim made by hand from one Karpenter launched: the same spec (requirements, nodeClassRef, resources,
 * taints, startupTaints, expireAfter, terminationGracePeriod), its `karpenter.sh/nodepool` label (and the pool's
 * template labels it carries) and an ownerReference to the NodePool, as Karpenter's provisioner writes them.
 * Karpenter's lifecycle controller launches it like one of its own.
 */
export function nodeClaimLike(
  source: NodeClaim,
  pool: NodePool,
  name: string,
  opts: NodeClaimCopyOptions = {}
): NodeClaim {
  const poolName = pool.metadata?.name ?? ""
  const uid = pool.metadata?.uid
  if (!uid) throw new Error(`NodePool ${poolName} has no uid: read it from the API server first`)
  const {
    nodeClassRef,
    requirements,
    resources,
    taints,
    startupTaints,
    expireAfter,
    terminationGracePeriod
  } = source.spec
  return {
    apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`,
    kind: "NodeClaim",
    metadata: {
      name,
      labels: { ...pool.spec.template.metadata?.labels, [NODEPOOL_LABEL]: poolName, ...opts.labels },
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
      ownerReferences: [
        {
          apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`,
          kind: "NodePool",
          name: poolName,
          uid,
          blockOwnerDeletion: true
        }
      ]
    },
    spec: {
      nodeClassRef,
      requirements,
      ...(resources ? { resources } : {}),
      ...(taints ? { taints } : {}),
      ...(startupTaints ? { startupTaints } : {}),
      ...(expireAfter ? { expireAfter } : {}),
      ...(terminationGracePeriod ? { terminationGracePeriod } : {})
    }
  }
}

export interface ProvisionOptions {
  /** Namespace of the Deployment (the caller's test namespace). */
  namespace: string
  /** Deployment name (default: the pool's name). */
  name?: string
  /** CPU request per pod (default 100m): one pod per Node either way (required hostname anti-affinity). */
  cpu?: string
}

/**
 * Makes a NodePool launch `replicas` Nodes: a Deployment of that many pods, one per Node (required anti-affinity on
 * kubernetes.io/hostname), pinned to the pool (nodeSelector `karpenter.sh/nodepool`) and tolerating its taint.
 * Scale it (or delete it) to change the demand.
 */
export async function provisionNodes(
  apps: AppsV1Api,
  pool: string,
  replicas: number,
  opts: ProvisionOptions
): Promise<V1Deployment> {
  const name = opts.name ?? pool
  const labels = { app: name, [TEST_RUN_LABEL]: RUN_ID }
  return apps.createNamespacedDeployment({
    namespace: opts.namespace,
    body: {
      metadata: { name, labels },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels },
          spec: {
            nodeSelector: { [NODEPOOL_LABEL]: pool },
            tolerations: [poolToleration(pool)],
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { labelSelector: { matchLabels: { app: name } }, topologyKey: "kubernetes.io/hostname" }
                ]
              }
            },
            containers: [
              {
                name: "main",
                image: "registry.k8s.io/pause:3.10",
                resources: { requests: { cpu: opts.cpu ?? "100m", memory: "64Mi" } }
              }
            ],
            terminationGracePeriodSeconds: 0
          }
        }
      }
    }
  })
}

/** Whether Karpenter's launch is complete: NodeClaim Initialized, its Node Ready and without the unregistered taint. */
export function isLaunched(claim: NodeClaim, node: V1Node | undefined): boolean {
  if (nodeClaimCondition(claim, "Initialized")?.status !== "True" || node === undefined) return false
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True"
  return ready && !(node.spec?.taints ?? []).some((t) => t.key === UNREGISTERED_TAINT)
}

export interface LaunchedNodeClaim {
  claim: NodeClaim
  node: V1Node
}

/** Reads a NodeClaim's Node (status.nodeName), undefined while it has none or it is gone. */
export async function nodeOf(core: CoreV1Api, claim: NodeClaim): Promise<V1Node | undefined> {
  const name = claim.status?.nodeName
  if (!name) return undefined
  try {
    return await core.readNode({ name })
  } catch (e) {
    if (errorCode(e) === 404) return undefined
    throw e
  }
}

/** Waits until one NodeClaim is launched (see isLaunched); returns it with its Node. */
export function waitForNodeClaimLaunched(
  custom: CustomObjectsApi,
  core: CoreV1Api,
  name: string,
  opts: WaitOptions = {}
): Promise<LaunchedNodeClaim> {
  return waitFor(
    `NodeClaim ${name} Initialized with a Ready Node`,
    async () => {
      const claim = await getNodeClaim(custom, name)
      if (claim === undefined) return undefined
      const node = await nodeOf(core, claim)
      return node !== undefined && isLaunched(claim, node) ? { claim, node } : undefined
    },
    { timeoutMs: 120_000, intervalMs: 500, ...opts }
  )
}

/**
 * Waits until the pool has exactly `count` NodeClaims (not deleting), all launched; returns them with their Nodes.
 * Karpenter's provisioner can launch one more claim than the pods need (it saw a pod still pending just after the
 * first claim registered; seen in CI: two claims for one pod). Once `count` launched claims hold every pod placed on
 * the pool, the extras, launched and empty, are deleted, so the pool is the size the test asked for.
 */
export function waitForPoolNodes(
  custom: CustomObjectsApi,
  core: CoreV1Api,
  pool: string,
  count: number,
  opts: WaitOptions = {}
): Promise<LaunchedNodeClaim[]> {
  return waitFor(
    `${count} NodeClaims of NodePool ${pool} Initialized with Ready Nodes`,
    async () => {
      const claims = (await listNodeClaims(custom, pool)).filter((c) => !c.metadata?.deletionTimestamp)
      if (claims.length < count) return undefined
      const launched: LaunchedNodeClaim[] = []
      for (const claim of claims) {
        const node = await nodeOf(core, claim)
        if (node === undefined || !isLaunched(claim, node)) return undefined
        launched.push({ claim, node })
      }
      if (launched.length === count) return launched
      await deleteEmptyExtras(core, custom, launched, count)
      return undefined
    },
    { timeoutMs: 120_000, intervalMs: 500, ...opts }
  )
}

/** Deletes the claims of `launched` whose Node holds no pod (DaemonSets' aside), once `count` of them hold pods. */
const deleteEmptyExtras = async (
  core: CoreV1Api,
  custom: CustomObjectsApi,
  launched: ReadonlyArray<LaunchedNodeClaim>,
  count: number
) => {
  const empty: LaunchedNodeClaim[] = []
  for (const l of launched) {
    const pods = await core.listPodForAllNamespaces({
      fieldSelector: `spec.nodeName=${l.node.metadata?.name}`
    })
    const workload = pods.items.filter(
      (p) => !p.metadata?.ownerReferences?.some((o) => o.kind === "DaemonSet")
    )
    if (workload.length === 0) empty.push(l)
  }
  if (launched.length - empty.length !== count) return
  for (const l of empty) await deleteNodeClaim(custom, l.claim.metadata?.name ?? "")
}

/** Waits until a NodeClaim and its Node are gone. */
export function waitForNodeClaimGone(
  custom: CustomObjectsApi,
  core: CoreV1Api,
  name: string,
  nodeName: string | undefined,
  opts: WaitOptions = {}
): Promise<true> {
  return waitFor(
    `NodeClaim ${name} and Node ${nodeName ?? "(none)"} gone`,
    async () => {
      if ((await getNodeClaim(custom, name)) !== undefined) return false
      if (nodeName === undefined) return true
      try {
        await core.readNode({ name: nodeName })
        return false
      } catch (e) {
        if (errorCode(e) === 404) return true
        throw e
      }
    },
    { timeoutMs: 120_000, intervalMs: 500, ...opts }
  )
}

/**
 * Removes a test's NodePool: its Deployment (when named), the NodePool, then its NodeClaims, waiting until they
 * and their Nodes are gone (Karpenter's termination finalizer does the work; nothing is stripped).
 */
export async function deleteNodePool(
  clients: KarpenterClients & { core: CoreV1Api },
  pool: string,
  {
    deployment,
    timeoutMs = 120_000
  }: { deployment?: { namespace: string; name: string }; timeoutMs?: number } = {}
): Promise<void> {
  const ignore404 = (e: unknown) => {
    if (errorCode(e) !== 404) throw e
  }
  if (deployment) await clients.apps.deleteNamespacedDeployment(deployment).catch(ignore404)
  await clients.custom.deleteClusterCustomObject({ ...NODEPOOLS, name: pool }).catch(ignore404)
  const claims = await listNodeClaims(clients.custom, pool)
  await Promise.all(claims.map((c) => deleteNodeClaim(clients.custom, c.metadata?.name ?? "")))
  await waitFor(
    `NodePool ${pool}, its NodeClaims and their Nodes gone`,
    async () => {
      if ((await listNodeClaims(clients.custom, pool)).length > 0) return false
      const nodes = await clients.core.listNode({ labelSelector: `${NODEPOOL_LABEL}=${pool}` })
      if (nodes.items.length > 0) return false
      try {
        await getNodePool(clients.custom, pool)
        return false
      } catch (e) {
        if (errorCode(e) === 404) return true
        throw e
      }
    },
    { timeoutMs, intervalMs: 500 }
  )
}
