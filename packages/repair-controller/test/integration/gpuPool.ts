// The replacement gate's GPU fixtures on the cluster tests' kwok Nodes: a GPU pool of three with a workload on its
// first node, the AcceleratedHardwareReady condition as the node's agent writes it, and the replacements of a node
// as they appear (the test acts on each: a fault, an agent).
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node"
import { createFakeNode, createTestPod, patchNodeCondition, waitForPodPhase } from "@nodemend/cluster-harness"
import { type Scenario, sleep } from "./helpers.ts"

export const GPU_NODE = { cpu: "96", memory: "1024Gi", pods: "110", "nvidia.com/gpu": "8" }
export const GPU_REASON = "NvidiaXID79Error"

/**
 * The controller settings the gate's GPU tests start from: AcceleratedHardwareReady=False replaced after 3 s (XID 79
 * reboots by default since reason-codes 2.0.0; the gate is a replacement's), no breaker or budget in the way.
 */
export const GPU_REPLACE = {
  policies: [
    { conditionType: "AcceleratedHardwareReady", status: "False", tolerationSeconds: 3, action: "Replace" }
  ],
  maxUnhealthyPercent: 100,
  maxInFlight: "100%"
}

/** AcceleratedHardwareReady on `name`, as its agent writes it: False with GPU_REASON, or True. */
export const setGpuHealth = (core: CoreV1Api, name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type: "AcceleratedHardwareReady",
    status,
    reason: status === "False" ? GPU_REASON : "NvidiaGPUIsReady",
    message: status === "False" ? "GPU has fallen off the bus (test)" : "GPUs ok",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

/** Three healthy GPU nodes of the scenario's pool and a Running pod on the first (`target`). */
export const gpuPoolWithWorkload = async (
  core: CoreV1Api,
  namespace: string,
  s: Scenario
): Promise<{ readonly target: string; readonly pod: V1Pod }> => {
  const nodes = await Promise.all(
    [0, 1, 2].map((i) =>
      createFakeNode(core, { name: `${s.tag}-${i}`, labels: s.labels, capacity: GPU_NODE })
    )
  )
  const target = nodes[0]!.metadata!.name!
  for (const n of nodes) await setGpuHealth(core, n.metadata!.name!, "True")
  const pod = await createTestPod(core, namespace, {
    bindTo: target,
    tolerations: [],
    labels: { app: `${s.tag}-app` }
  })
  await waitForPodPhase(core, namespace, pod.metadata!.name!)
  return { target, pod }
}

/** Calls `act` once for each replacement of `node` as it appears (its index: 0 for the first); `seen` in order. */
export const onEachReplacement = (
  core: CoreV1Api,
  node: string,
  act: (name: string, index: number) => Promise<unknown> | undefined
) => {
  const seen: string[] = []
  let on = true
  const loop = (async () => {
    while (on) {
      const l = await core.listNode({ labelSelector: `nodemend.io/replacement-of=${node}` })
      for (const n of l.items) {
        const name = n.metadata?.name ?? ""
        if (seen.includes(name)) continue
        seen.push(name)
        await act(name, seen.length - 1)
      }
      await sleep(100)
    }
  })()
  return {
    seen,
    stop: async () => {
      on = false
      await loop
    }
  }
}
