// Shared by the real-node tests: the chart installed with the images `npm run images` built, clients that
// act with a real pod's service-account token, and the pods' tokens as the kubelet mounted them.
import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Pod
} from "@kubernetes/client-node"
import { kubeconfigPath, waitFor } from "@nodemend/cluster-harness"
import { helmPath } from "../../../../tools/helm/build.mjs"
import { NODE_NAME, nodePaths } from "../../../../tools/cluster/realnode.mjs"
import { CHART_DIR } from "../../src/index.ts"
import { readVolumeFile } from "./volumeFile.ts"

export const REAL_NODE = NODE_NAME
export const RELEASE = "nodemend"
export const CONTROLLER_NS = "nodemend-system"
export const AGENT_NS = "kube-system"

/** The chart on the real node: the kwok provider (no cloud here), the controller pinned to the real node. */
export const CHART_VALUES = {
  controller: {
    cloudProvider: "kwok",
    nodeSelector: { "nodemend.io/real-node": "true" }
  }
}

export const admin = () => {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigPath())
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    leases: kc.makeApiClient(CoordinationV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi)
  }
}

/** A client that authenticates with `token` only (the admin kubeconfig's server and CA). */
export const asToken = (token: string) => {
  const base = admin().kc
  const cluster = base.getCurrentCluster()!
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name: "u", token }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return {
    core: kc.makeApiClient(CoreV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
    leases: kc.makeApiClient(CoordinationV1Api)
  }
}

export const helm = (args: ReadonlyArray<string>) =>
  execFileSync(helmPath(), [...args, "--kubeconfig", kubeconfigPath()], {
    encoding: "utf8",
    env: {
      ...process.env,
      HELM_CACHE_HOME: "/tmp/nodemend-helm-cache",
      HELM_CONFIG_HOME: "/tmp/nodemend-helm-config"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** `helm upgrade --install` of the chart with `values` (each top-level key merged over the chart's defaults). */
export const installChart = (values: Record<string, unknown> = CHART_VALUES) =>
  helm([
    "upgrade",
    "--install",
    RELEASE,
    CHART_DIR,
    "-n",
    CONTROLLER_NS,
    "--create-namespace",
    ...Object.entries(values).flatMap(([k, v]) => ["--set-json", `${k}=${JSON.stringify(v)}`]),
    "--wait",
    "--timeout",
    "3m"
  ])

export const uninstallChart = () =>
  helm(["uninstall", RELEASE, "-n", CONTROLLER_NS, "--wait", "--timeout", "2m"])

/** Running, Ready pods of a workload, by its app.kubernetes.io/name label. */
export const readyPods = async (namespace: string, app: string, count: number): Promise<V1Pod[]> => {
  const { core } = admin()
  return waitFor(
    `${count} Ready ${app} pods`,
    async () => {
      const pods = (
        await core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/name=${app}` })
      ).items.filter(
        (p) =>
          !p.metadata?.deletionTimestamp &&
          p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
      )
      return pods.length === count ? pods : undefined
    },
    { timeoutMs: 120_000, intervalMs: 500 }
  )
}

/**
 * The service-account token the kubelet mounted into a running pod (its projected kube-api-access volume
 * under the real node's kubelet root): the exact credential the pod uses.
 */
export const podToken = (pod: V1Pod): string => {
  const stateDir = dirname(kubeconfigPath())
  const volumes = join(
    nodePaths(stateDir).kubelet,
    "pods",
    pod.metadata!.uid!,
    "volumes",
    "kubernetes.io~projected"
  )
  const access = readdirSync(volumes).find((d) => d.startsWith("kube-api-access-"))
  if (!access) throw new Error(`no kube-api-access volume for ${pod.metadata?.name} in ${volumes}`)
  return readVolumeFile(join(volumes, access), "token")
}
