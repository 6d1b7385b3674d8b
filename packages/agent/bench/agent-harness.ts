/**
 * Shared by the agent benches: a kwok Node on the local cluster (.nodemend/kubeconfig or
 * NODEMEND_KUBECONFIG) and the shipped agent (the bundle, dist/nodemend-agent.mjs, built first) spawned
 * against it with the deployed V8 flags.
 */
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  BUNDLE,
  buildBundle as buildBundleAsScripted,
  DEPLOYED_ENV,
  DEPLOYED_NODE_FLAGS as DEPLOYED_FLAG_LIST,
  type RunningAgent,
  spawnNode
} from "../test/integration/agent-process.ts"

export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url))
const REPO = join(PACKAGE_DIR, "../..")

export const kubeconfigPath = (): string => {
  const p = process.env.NODEMEND_KUBECONFIG ?? join(REPO, ".nodemend/kubeconfig")
  if (!existsSync(p))
    throw new Error(`no cluster kubeconfig at ${p}: start one with the cluster tool (docs/local-cluster.md)`)
  return p
}

export const makeClients = () => {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigPath())
  return { kc, core: kc.makeApiClient(CoreV1Api) }
}

export const createKwokNode = async (core: CoreV1Api, name: string): Promise<void> => {
  const fake = { "kwok.x-k8s.io/node": "fake" }
  await core.createNode({
    body: { metadata: { name, labels: { ...fake, "nodemend.io/bench": "agent" }, annotations: fake } }
  })
  const capacity = { cpu: "8", memory: "32Gi", pods: "110" }
  await core
    .patchNodeStatus(
      { name, body: { status: { capacity, allocatable: capacity } } },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
    )
    .catch(() => undefined)
}

/** The V8 flags of deploy/agent (DaemonSet command, systemd ExecStart); override with AGENT_NODE_FLAGS. */
export const DEPLOYED_NODE_FLAGS = DEPLOYED_FLAG_LIST.join(" ")
export const AGENT_NODE_FLAGS = (process.env.AGENT_NODE_FLAGS ?? DEPLOYED_NODE_FLAGS)
  .split(" ")
  .filter((f) => f !== "")

/** Builds the bundle from the current sources, as the package's `build` script does (not when running the sources). */
export const buildBundle = (): void => {
  if (process.env.AGENT_FROM_SOURCE !== "1") buildBundleAsScripted()
}

/** The agent's command line for `node` against the bench cluster, health server on a free port. */
export const agentArgs = (node: string, hostRoot: string, extra: readonly string[] = []): string[] => [
  "--node-name",
  node,
  "--kubeconfig",
  kubeconfigPath(),
  "--host-root",
  hostRoot,
  ...extra,
  "--health-address",
  "127.0.0.1:0"
]

/**
 * The shipped agent with the deployed flags and environment; AGENT_FROM_SOURCE=1 runs src/main.ts under
 * type stripping instead (comparison).
 */
export const spawnAgent = (
  args: readonly string[],
  {
    flags = AGENT_NODE_FLAGS,
    fromSource = process.env.AGENT_FROM_SOURCE === "1",
    env = DEPLOYED_ENV
  }: {
    readonly flags?: readonly string[]
    readonly fromSource?: boolean
    readonly env?: Readonly<Record<string, string>>
  } = {}
): RunningAgent => {
  const entry = fromSource ? ["--conditions=source", join(PACKAGE_DIR, "src/main.ts")] : [BUNDLE]
  // Type stripping runs on WebAssembly, which lite mode turns off.
  const v8Flags = fromSource ? flags.filter((f) => f !== "--lite-mode") : flags
  return spawnNode([...v8Flags, ...entry, ...args], env)
}

const CLK_TCK = 100

/**
 * utime + stime of a process in seconds, its resident set in bytes, and the set's two parts: anonymous
 * (heaps, stacks) and file-backed (pages of the node binary and shared libraries).
 */
export const processUsage = (
  pid: number
): { cpuSeconds: number; rssBytes: number; anonBytes: number; fileBytes: number } => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = Number(rest[11]) + Number(rest[12])
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) * 1024
  return {
    cpuSeconds: ticks / CLK_TCK,
    rssBytes: kib("VmRSS"),
    anonBytes: kib("RssAnon"),
    fileBytes: kib("RssFile")
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
