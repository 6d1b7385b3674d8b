/**
 * Mirrors fake instances as kwok Nodes in a real cluster: RunInstances -> a Node kwok animates
 * (label + annotation `kwok.x-k8s.io/node=fake`, which the cluster harness's kwok selects on);
 * termination -> the Node is deleted; reboot -> a new `status.nodeInfo.bootID`.
 */
import {
  CONDITION_TYPE_INFO,
  DEFAULT_POOL_LABEL,
  INSTANCE_TYPE_LABEL,
  ZONE_ID_LABEL,
  ZONE_LABEL
} from "@nodemend/reason-codes"
import { type KubeError, type KubeHttp, NODES_PATH, type Node, nodePath } from "@nodemend/kube-access"
import { Effect } from "effect"
import { nodeCapacityOf } from "./ec2/InstanceTypes.ts"
import type { FakeInstance, NodeMirror } from "./InstanceStore.ts"

/**
 * No agent runs on a fake instance: its Node registers with what a healthy agent first reports (every managed type
 * True), which the controller's replacement health gate reads. An instance of a broken launch template leaves its
 * fault's type out: the agent reports it once the node is Ready (below), as the fault.
 */
const agentFirstReport = (i: FakeInstance) => {
  const at = new Date().toISOString()
  return CONDITION_TYPE_INFO.filter((c) => c.type !== i.fault?.type).map((c) => ({
    type: c.type,
    status: "True",
    reason: c.readyReason,
    message: c.readyMessage,
    lastHeartbeatTime: at,
    lastTransitionTime: at
  }))
}

export const KWOK_NODE_KEY = "kwok.x-k8s.io/node"
export const KWOK_NODE_VALUE = "fake"
/** Annotations the fake writes so a replacement of a replacement can use the same template. */
export const LAUNCH_TEMPLATE_ID_ANNOTATION = "nodemend.io/launch-template-id"
export const LAUNCH_TEMPLATE_NAME_ANNOTATION = "nodemend.io/launch-template-name"
export const LAUNCH_TEMPLATE_VERSION_ANNOTATION = "nodemend.io/launch-template-version"

const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?$/

/** Instance tags that are valid, prefixed Kubernetes label keys (`nodemend.io/pool`) become labels. */
export function tagsAsLabels(tags: Readonly<Record<string, string>>): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const [k, v] of Object.entries(tags)) {
    const parts = k.split("/")
    if (parts.length !== 2 || k.startsWith("aws:")) continue
    const [prefix, name] = parts as [string, string]
    if (DNS_SUBDOMAIN.test(prefix) && NAME.test(name) && (v === "" || NAME.test(v))) labels[k] = v
  }
  return labels
}

/** As its type promises (ec2/InstanceTypes.ts, what DescribeInstanceTypes says), less the GPUs it came up without. */
const capacityOf = (i: FakeInstance) => ({
  ...nodeCapacityOf(i.instanceType, i.missingGpus),
  pods: "110",
  "ephemeral-storage": "100Gi"
})

const SMP = "application/strategic-merge-patch+json"
const MERGE = "application/merge-patch+json"

/** Runs a call; an answer with one of `ignore` (e.g. 409 on create, 404 on delete) counts as done. */
const run = <A>(call: Effect.Effect<A, KubeError>, ...ignore: number[]): Promise<A | undefined> =>
  Effect.runPromise(
    call.pipe(
      Effect.catchIf(
        (e) => e.code !== undefined && ignore.includes(e.code),
        () => Effect.succeed(undefined)
      )
    )
  )

export interface KwokNodeMirrorOptions {
  /** How long a rebooting Node stays NotReady before it reports Ready with its new boot id. */
  readonly rebootDelayMs?: number
}

const readyCondition = (status: "True" | "False", reason: string, message: string) => ({
  type: "Ready",
  status,
  reason,
  message,
  lastHeartbeatTime: new Date().toISOString(),
  lastTransitionTime: new Date().toISOString()
})

/** `kube`: a connection to the cluster whose kwok animates the Nodes (the shared client, ADR 0011). */
export function kwokNodeMirror(
  kube: KubeHttp,
  region: string,
  options: KwokNodeMirrorOptions = {}
): NodeMirror {
  const patchStatus = (name: string, status: object) =>
    run(kube.call("patch node status", "PATCH", `${nodePath(name)}/status`, { status }, SMP))
  const rebootDelayMs = options.rebootDelayMs ?? 1000
  /**
   * kwok's initialize stage writes the whole `nodeInfo` from the Node it last saw: when that copy predates the
   * boot-id patch (kwok behind under load), the boot id is wiped. It is put back until the Node has been Ready with
   * it for 5 s in a row (at most 60 s): CI runs lost it twice, once after the Node had shown Ready with it, and with
   * it every reboot's proof. `onceReady` runs the first time the Node is Ready with its boot id.
   */
  const keepBootId = async (i: FakeInstance, onceReady: () => Promise<unknown>) => {
    let settledSince: number | undefined
    let told = false
    for (let n = 0; n < 120; n++) {
      const node = (await run(kube.call("read node", "GET", nodePath(i.nodeName)), 404)) as Node | undefined
      if (node === undefined) return
      const ready = node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
      if ((node.status?.nodeInfo as { bootID?: string } | undefined)?.bootID !== i.bootId) {
        settledSince = undefined
        await patchStatus(i.nodeName, { nodeInfo: { bootID: i.bootId } })
      } else if (!ready) settledSince = undefined
      else {
        if (!told) {
          told = true
          await onceReady()
        }
        settledSince ??= Date.now()
        if (Date.now() - settledSince >= 5000) return
      }
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  return {
    async create(i: FakeInstance) {
      const capacity = capacityOf(i)
      const lt = i.launchTemplate
      await run(
        kube.call("create node", "POST", NODES_PATH, {
          apiVersion: "v1",
          kind: "Node",
          metadata: {
            name: i.nodeName,
            labels: {
              ...tagsAsLabels(i.tags),
              "kubernetes.io/hostname": i.nodeName,
              "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64",
              [INSTANCE_TYPE_LABEL]: i.instanceType,
              "topology.kubernetes.io/region": region,
              [ZONE_LABEL]: i.zone.name,
              [ZONE_ID_LABEL]: i.zone.zoneId,
              [KWOK_NODE_KEY]: KWOK_NODE_VALUE
            },
            annotations: {
              [KWOK_NODE_KEY]: KWOK_NODE_VALUE,
              "node.alpha.kubernetes.io/ttl": "0",
              ...(lt?.id ? { [LAUNCH_TEMPLATE_ID_ANNOTATION]: lt.id } : {}),
              ...(lt?.name ? { [LAUNCH_TEMPLATE_NAME_ANNOTATION]: lt.name } : {}),
              ...(lt ? { [LAUNCH_TEMPLATE_VERSION_ANNOTATION]: lt.version } : {})
            }
          },
          spec: { providerID: `aws:///${i.zone.name}/${i.instanceId}` },
          status: { capacity, allocatable: capacity, conditions: agentFirstReport(i) }
        }),
        409
      )
      // kwok's initialize stage only patches status; seed capacity and the boot id as a kubelet would.
      await patchStatus(i.nodeName, { capacity, allocatable: capacity, nodeInfo: { bootID: i.bootId } })
      // In the background: the instance is running once its Node exists, as before. An instance of a broken
      // launch template reports its fault once Ready, as its agent would.
      void keepBootId(i, async () =>
        i.fault === undefined
          ? undefined
          : patchStatus(i.nodeName, {
              conditions: [
                {
                  ...i.fault,
                  lastHeartbeatTime: new Date().toISOString(),
                  lastTransitionTime: new Date().toISOString()
                }
              ]
            })
      ).catch(() => undefined)
    },
    async delete(i: FakeInstance) {
      await run(kube.call("delete node", "DELETE", nodePath(i.nodeName)), 404)
    },
    async reboot(i: FakeInstance) {
      // Like a kubelet going down and coming back: NotReady, then Ready with the new boot id. kwok's
      // heartbeat only touches Ready=True nodes, so it does not undo the NotReady in between.
      await patchStatus(i.nodeName, {
        conditions: [readyCondition("False", "KubeletNotReady", "rebooting (fake cloud)")]
      })
      await new Promise((r) => setTimeout(r, rebootDelayMs))
      await patchStatus(i.nodeName, {
        conditions: [readyCondition("True", "KubeletReady", "kubelet is posting ready status (fake cloud)")],
        nodeInfo: { bootID: i.bootId }
      })
    },
    async read(nodeName: string) {
      const n = (await run(kube.call("read node", "GET", nodePath(nodeName)))) as Node
      const labels = n.metadata?.labels ?? {}
      const lt = n.metadata?.annotations?.[LAUNCH_TEMPLATE_ID_ANNOTATION]
      return {
        nodeName,
        providerID: n.spec?.providerID,
        instanceType: labels[INSTANCE_TYPE_LABEL],
        zoneName: labels[ZONE_LABEL],
        ...(lt !== undefined ? { launchTemplate: { id: lt, version: "$Default" } } : {}),
        // The tags such an instance carries: ours, and Karpenter's pool tag.
        tags: Object.fromEntries(
          Object.entries(labels).filter(([k]) => k.startsWith("nodemend.io/") || k === DEFAULT_POOL_LABEL)
        )
      }
    },
    async setProviderId(nodeName: string, providerID: string) {
      await run(kube.call("patch node", "PATCH", nodePath(nodeName), { spec: { providerID } }, MERGE))
    }
  }
}
