// What the Prometheus stories (prometheus.test.ts, prometheusAlerts.test.ts) share: the cluster's Prometheus, its
// targets cleared before and after (an earlier run's series deleted: none of it counts), a namespace, the binaries
// started from their sources and listed as the pods the PodMonitors select would be, and everything removed after.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  clients,
  createFakeNode,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  kubeconfigPath,
  patchNodeCondition,
  uniqueName
} from "@nodemend/cluster-harness"
import { afterAll, beforeAll } from "vitest"
import { stringify } from "yaml"
import type { ClusterInfo } from "../../../../tools/cluster/cluster.mjs"
import {
  deleteAllSeries,
  FAKE_CLOUD_JOB,
  writeStaticTargets,
  writeTargets
} from "../../../../tools/cluster/prometheus.mjs"
import type { makeFakeHost } from "../../../agent/test/integration/agent-process.ts"
import { type Binary, freePort, spawnSourceBinary } from "./binaries.ts"
import { prometheusApi } from "./prometheusApi.ts"

export const POOL_LABEL = "karpenter.sh/nodepool"
export const ZONE_LABEL = "topology.kubernetes.io/zone"

/** An agent as a PodMonitor target: its health port, its Node. */
export interface AgentTarget {
  readonly address: string
  readonly namespace: string
  readonly pod: string
  readonly node: string
  readonly port: string
}

/** Registers the story's beforeAll/afterAll; `prefix` names its Nodes, namespace and temporary files. */
export const prometheusStory = (prefix: string) => {
  const info = JSON.parse(
    readFileSync(join(dirname(kubeconfigPath()), "cluster.json"), "utf8")
  ) as ClusterInfo
  const prometheus = info.prometheus
  const { kc, core } = clients()
  const tag = uniqueName(prefix).slice(0, 40)
  const scratch = mkdtempSync(join(tmpdir(), `nodemend-${prefix}-`))
  const running: Binary[] = []
  const cleanups: Array<() => unknown> = []
  let namespace = ""

  const clearTargets = () => {
    if (prometheus === undefined) return
    writeTargets(prometheus.targetsDir, "nodemend-controller", [])
    writeTargets(prometheus.targetsDir, "nodemend-agent", [])
    writeStaticTargets(prometheus.targetsDir, FAKE_CLOUD_JOB, [])
  }
  beforeAll(async () => {
    if (prometheus === undefined) return
    clearTargets()
    await deleteAllSeries(prometheus.url)
    namespace = await createTestNamespace(core, prefix)
  })
  afterAll(async () => {
    for (const b of running.splice(0)) await b.stop()
    clearTargets()
    for (const f of cleanups.splice(0).reverse()) await f()
    await deleteRunNodes(core)
    if (namespace) await deleteNamespace(core, namespace)
    rmSync(scratch, { recursive: true, force: true })
  })

  const kubeconfig = kubeconfigPath()
  const outputs = () => running.map((b) => b.output().slice(-2000)).join("\n---\n")
  const node = async (name: string, labels: Record<string, string>) =>
    (await createFakeNode(core, { name, labels })).metadata!.name!

  /** The controller from its sources, on a free port; listed as the controller's pod once `listed` is called. */
  const startController = async (config: Record<string, unknown>) => {
    const configPath = join(scratch, "controller.yaml")
    writeFileSync(configPath, stringify({ namespace, ...config }))
    const port = await freePort()
    spawnSourceBinary(
      running,
      "packages/repair-controller/src/main.ts",
      [
        "--config",
        configPath,
        "--kubeconfig",
        kubeconfig,
        "--identity",
        `${tag}-ctl`,
        "--port",
        String(port)
      ],
      port
    )
    return {
      port,
      listed: () =>
        writeTargets(prometheus!.targetsDir, "nodemend-controller", [
          {
            address: `127.0.0.1:${port}`,
            namespace: "nodemend-system",
            pod: `nodemend-controller-${tag}`,
            port: "http"
          }
        ])
    }
  }

  /** An agent on `nodeName` with its own fake host root; returns its target (list it with `listAgents`). */
  const startAgent = async (options: {
    readonly nodeName: string
    readonly host: ReturnType<typeof makeFakeHost>
    readonly pod: string
    readonly kubeconfig?: string
    readonly config?: string
    readonly env?: Readonly<Record<string, string>>
  }): Promise<AgentTarget> => {
    cleanups.push(() => options.host.cleanup())
    const port = await freePort()
    spawnSourceBinary(
      running,
      "packages/agent/src/main.ts",
      [
        "--node-name",
        options.nodeName,
        "--kubeconfig",
        options.kubeconfig ?? kubeconfig,
        "--host-root",
        options.host.root,
        ...(options.config !== undefined ? ["--config", options.config] : []),
        "--health-address",
        `127.0.0.1:${port}`
      ],
      port,
      options.env
    )
    return {
      address: `127.0.0.1:${port}`,
      namespace: "kube-system",
      pod: options.pod,
      node: options.nodeName,
      port: "health"
    }
  }
  const listAgents = (targets: ReadonlyArray<AgentTarget>) =>
    writeTargets(prometheus!.targetsDir, "nodemend-agent", targets)

  const unhealthy = (name: string) =>
    patchNodeCondition(core, name, {
      type: "KernelReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs",
      message: `fork failed: out of PIDs (${prefix} test)`,
      lastHeartbeatTime: new Date(),
      lastTransitionTime: new Date()
    })

  return {
    prometheus,
    api: prometheusApi(prometheus?.url ?? ""),
    kc,
    core,
    tag,
    scratch,
    running,
    kubeconfig,
    namespace: () => namespace,
    onCleanup: (f: () => unknown) => void cleanups.push(f),
    outputs,
    node,
    startController,
    startAgent,
    listAgents,
    unhealthy
  }
}
