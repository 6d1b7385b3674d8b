/**
 * The fleet of the main job: a real local control plane, the fake cloud (EC2 + ARC on loopback, each instance
 * a kwok Node), pools launched through RunInstances from a launch template with the pool tag, one agent per
 * node on its own simulated host root, and the repair controller with `cloudProvider: aws`. The agent and the
 * controller run as they ship: their bundles with the V8 flags and environment of deploy/. Every process is
 * started in its own process group and stopped by that group's id, so nothing it spawned (journalctl) is left.
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { dirname, join } from "node:path"
import { AppsV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { parseAllDocuments } from "yaml"
import { buildAsScripted, deployedRuntime } from "../../../tools/bundle/shipped.mjs"
import { build } from "../../../tools/cluster/build.mjs"
import { down, up } from "../../../tools/cluster/cluster.mjs"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { CLUSTER_ARN, controllerConfigYaml, POOL_SETTINGS, REGION, TOLERATIONS } from "./controllerConfig.mjs"
import { dcgmFifoOf } from "./faults.mjs"
import { makeHost } from "./host.mjs"
import { DEMO_DIR } from "./state.mjs"

export { REGION, TOLERATIONS }

export const POOL_LABEL = "karpenter.sh/nodepool"
const NODE = process.execPath

export const CONDITION_TYPES = Object.keys(TOLERATIONS)

/**
 * Two pools: `general` over three zones and `gpu` (its agents get NVML and DCGM from the test doubles, 8 GPUs).
 * `settings`: the pool's breaker and in-flight budget in the controller's config (controllerConfig.mjs).
 */
export const defaultPools = (prefix = "") => [
  {
    name: `${prefix}general`,
    settings: POOL_SETTINGS.general,
    instanceType: "m7i.2xlarge",
    perZone: { [`${REGION}a`]: 4, [`${REGION}b`]: 3, [`${REGION}c`]: 3 },
    launchTemplateId: "lt-0de30a0000000a001"
  },
  {
    name: `${prefix}gpu`,
    instanceType: "p5.48xlarge",
    perZone: { [`${REGION}a`]: 4, [`${REGION}b`]: 4 },
    launchTemplateId: "lt-0de30a0000000a002",
    settings: POOL_SETTINGS.gpu,
    gpu: true
  }
]

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export const condition = (node, type) => node?.status?.conditions?.find((c) => c.type === type)
export const isReady = (node) => condition(node, "Ready")?.status === "True"
/** The node's agent has written its conditions (every agent owns KernelReady), so it reads its sources. */
export const agentPublished = (node, type = "KernelReady") => condition(node, type) !== undefined

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

/**
 * Stops the process groups a previous run recorded that still run with the demo directory in their command line
 * (every child has it: host root, config or URL file), so a recycled pid is never signalled.
 */
const stopLeftovers = (dir) => {
  const stateFile = join(dir, "fleet.json")
  if (!existsSync(stateFile)) return
  const { pgids = [] } = JSON.parse(readFileSync(stateFile, "utf8"))
  for (const pid of pgids) {
    const cmd = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      } catch {
        return ""
      }
    })()
    if (cmd.includes(dir))
      try {
        process.kill(-pid, "SIGKILL")
      } catch {}
  }
}

/**
 * The demo runs its own controller and agents outside the cluster. Where the Helm chart's controller runs, it would
 * repair the demo's nodes beside the demo's own, and the chart's admission policy refuses the demo controller's
 * Events: stop with what to do instead of a scenario that times out.
 */
async function refuseChartCluster(kc) {
  const found = (
    await kc
      .makeApiClient(AppsV1Api)
      .listDeploymentForAllNamespaces({ labelSelector: "app.kubernetes.io/name=nodemend-controller" })
  ).items.filter((d) => !d.metadata.deletionTimestamp)
  if (found.length === 0) return
  const at = found.map((d) => `${d.metadata.namespace}/${d.metadata.name}`).join(", ")
  throw new Error(
    `the Helm chart's controller runs on this cluster (Deployment ${at}): it would repair the demo's nodes beside ` +
      "the demo's own controller, and the chart's admission policy refuses the demo controller's Events. Use a " +
      "cluster without the chart (npm run kind:up -- --no-chart) or uninstall it (helm uninstall nodemend -n nodemend-system)."
  )
}

/**
 * Starts the whole fleet. `prefix` names the pools (the scenario uses its own, so it can share a cluster);
 * `say` gets progress lines. Returns the handle the view, `inject` and the scenario work with.
 */
export const startFleet = async ({
  say = () => {},
  prefix = "",
  namespace = "nodemend-system",
  dir = DEMO_DIR,
  bootDelayMs = 20_000,
  fleetBootDelayMs = 1000,
  onSignal = () => {}
} = {}) => {
  const id = Date.now().toString(36)
  const pools = defaultPools(prefix)
  stopLeftovers(dir)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, "logs"), { recursive: true })
  const children = new Map()
  const state = { id, pools: pools.map((p) => p.name), namespace, hosts: {}, pgids: [] }
  const saveState = () => writeFileSync(join(dir, "fleet.json"), `${JSON.stringify(state, null, 2)}\n`)

  const start = (name, nodeArgs, env = {}) => {
    const log = join(dir, "logs", `${name}.log`)
    const child = spawn(NODE, nodeArgs, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    child.stdout.on("data", (d) => appendFileSync(log, d))
    child.stderr.on("data", (d) => appendFileSync(log, d))
    children.set(name, child)
    state.pgids.push(child.pid)
    saveState()
    return child
  }
  const stopGroup = async (child) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise((r) => child.once("exit", r))
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {}
    await Promise.race([gone, sleep(3000)])
    try {
      process.kill(-child.pid, "SIGKILL")
    } catch {}
  }

  let cluster
  let core
  const selector = `${POOL_LABEL} in (${pools.map((p) => p.name).join(",")})`
  const stop = async () => {
    await Promise.all([...children.values()].map(stopGroup))
    children.clear()
    state.hosts = {}
    state.stoppedAt = new Date().toISOString()
    saveState()
    if (cluster && !cluster.reused) await down({ quiet: true })
    // On a cluster that stays up, the pools' Nodes would keep kwok busy with heartbeats: remove them.
    else if (core)
      for (const n of (await core.listNode({ labelSelector: selector }).catch(() => ({ items: [] }))).items)
        await core.deleteNode({ name: n.metadata.name }).catch(() => undefined)
  }

  // The children run in their own process groups, out of reach of the terminal's Ctrl-C: stop them here.
  let signalled = false
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129]
  ])
    process.once(signal, () => {
      if (signalled) return
      signalled = true
      onSignal(signal)
      void stop().finally(() => process.exit(code))
    })

  try {
    // The cluster: NODEMEND_KUBECONFIG's (left running), else the development cluster (started if needed).
    let kubeconfig = process.env.NODEMEND_KUBECONFIG
    if (kubeconfig) say(`cluster: ${kubeconfig} (NODEMEND_KUBECONFIG)`)
    else {
      say("building the control plane (cached after the first run)")
      await build()
      // The demo uses no Karpenter (its pools come from the fake cloud): not built, not started for it.
      cluster = await up({ karpenter: "unused" })
      kubeconfig = cluster.kubeconfig
      say(`cluster ${cluster.reused ? "reused" : "started"}: ${cluster.server}`)
    }
    const kc = new KubeConfig()
    kc.loadFromFile(kubeconfig)
    core = kc.makeApiClient(CoreV1Api)
    await refuseChartCluster(kc)

    // The fake cloud: EC2 Query + ARC REST-JSON on loopback. Started first, to boot while the objects below are
    // applied (it touches no Node before RunInstances), as the EC2 client loads.
    const urlFile = join(dir, "fake-cloud.url")
    start("fake-cloud", [
      "--conditions=source",
      "packages/fake-cloud/src/main.ts",
      "serve",
      "--kubeconfig",
      kubeconfig,
      "--url-file",
      urlFile,
      "--boot-delay-ms",
      String(bootDelayMs),
      "--cluster-arn",
      CLUSTER_ARN
    ])
    const ec2Client = import("@aws-sdk/client-ec2")
    ec2Client.catch(() => undefined) // awaited below; a failure surfaces there, not as an unhandled rejection

    // The NodeDiagnostic CRD, the controller's namespace and both components' RBAC, as deploy/ ships them.
    const objects = KubernetesObjectApi.makeApiClient(kc)
    for (const file of [
      "crds/nodediagnostics.nodemend.io.yaml",
      "controller/namespace.yaml",
      "controller/rbac.yaml",
      "agent/rbac.yaml"
    ])
      for (const doc of parseAllDocuments(readFileSync(join(REPO_ROOT, "deploy", file), "utf8"))) {
        const o = doc.toJS()
        if (o?.kind)
          await objects.patch(o, undefined, undefined, "nodemend-demo", true, PatchStrategy.ServerSideApply)
      }
    await core
      .createNamespace({ body: { metadata: { name: namespace, labels: { "nodemend.io/demo": "true" } } } })
      .catch((e) => {
        if (e?.code !== 409) throw e
      })
    // An earlier run's pools would count in the breaker: remove them (their instances died with that fake cloud).
    for (const n of (await core.listNode({ labelSelector: selector })).items)
      await core.deleteNode({ name: n.metadata.name }).catch(() => undefined)

    const cloudUrl = await waitFor(
      "the fake cloud",
      async () => (existsSync(urlFile) && readFileSync(urlFile, "utf8").trim()) || undefined,
      { timeoutMs: 120_000, intervalMs: 250 }
    )
    const awsEnv = { AWS_ACCESS_KEY_ID: "demo", AWS_SECRET_ACCESS_KEY: "demo", AWS_REGION: REGION }
    const { EC2Client, RunInstancesCommand } = await ec2Client
    const ec2 = new EC2Client({
      region: REGION,
      endpoint: cloudUrl,
      credentials: { accessKeyId: "demo", secretAccessKey: "demo" }
    })
    let total = 0
    for (const pool of pools)
      for (const [zone, count] of Object.entries(pool.perZone)) {
        await ec2.send(
          new RunInstancesCommand({
            MinCount: count,
            MaxCount: count,
            LaunchTemplate: { LaunchTemplateId: pool.launchTemplateId, Version: "1" },
            InstanceType: pool.instanceType,
            Placement: { AvailabilityZone: zone },
            // The fleet exists before the demo in a real account: it boots at once; replacements take bootDelayMs.
            TagSpecifications: [
              {
                ResourceType: "instance",
                Tags: [
                  { Key: POOL_LABEL, Value: pool.name },
                  { Key: "fake-cloud:boot-delay-ms", Value: String(fleetBootDelayMs) }
                ]
              }
            ]
          })
        )
        total += count
      }
    say(
      `RunInstances: ${pools.map((p) => `${p.name} ${Object.values(p.perZone).reduce((a, b) => a + b)}`).join(", ")} (boot ${bootDelayMs / 1000} s)`
    )
    // While the instances boot: the agent's and the controller's bundles, built as their build scripts build them,
    // and the GPU test doubles (each blocks this process a few seconds; the fake cloud boots on in its own).
    const agentRun = deployedRuntime("agent/daemonset.yaml")
    const controllerRun = deployedRuntime("controller/deployment.yaml")
    const agentBundle = buildAsScripted(join(REPO_ROOT, "packages", "agent"))
    const controllerBundle = buildAsScripted(join(REPO_ROOT, "packages", "repair-controller"))
    const { buildGpuDoubles } = await import("../../dcgm-native/test/double/build.ts")
    const doubles = buildGpuDoubles()
    // The repair controller, also while the instances boot: their Nodes appear only once booted, and it acts on
    // nothing before their agents write conditions (as on a real cluster, where it runs before nodes join).
    const metricsPort = await freePort()
    const controllerConfig = join(dir, "controller.yaml")
    writeFileSync(
      controllerConfig,
      controllerConfigYaml({
        namespace,
        nodeSelector: selector,
        leaseName: `nodemend-demo-${id}`,
        metricsPort,
        cloudUrl,
        pools: Object.fromEntries(pools.map((p) => [p.name, p.settings]))
      })
    )
    start(
      "controller",
      [...controllerRun.flags, controllerBundle, "--config", controllerConfig, "--kubeconfig", kubeconfig],
      { ...controllerRun.env, ...awsEnv }
    )
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
    await waitFor("the controller's /metrics", async () => (await fetch(metricsUrl)).ok, {
      timeoutMs: 60_000,
      intervalMs: 500
    })
    Object.assign(state, { kubeconfig, cloudUrl, metricsUrl, controllerConfig })
    saveState()
    say(`controller: cloudProvider aws, namespace ${namespace}, metrics ${metricsUrl}`)
    await waitFor(
      `${total} Ready nodes`,
      async () => (await core.listNode({ labelSelector: selector })).items.filter(isReady).length >= total,
      { timeoutMs: bootDelayMs + 240_000, intervalMs: 500 }
    )

    // One agent per node, each on its own simulated host root.
    const gpuPools = new Set(pools.filter((p) => p.gpu).map((p) => p.name))
    const configFor = (gpu) => {
      const path = join(dir, gpu ? "agent-gpu.yaml" : "agent.yaml")
      if (!existsSync(path))
        writeFileSync(
          path,
          gpu
            ? `monitors:\n  nvidia:\n    nvmlLibraryPath: ${doubles.nvml}\n    dcgmLibraryPath: ${doubles.dcgm}\n    pollSeconds: 30\n`
            : "monitors:\n  nvidia: { enabled: false }\n  neuron: { enabled: false }\n"
        )
      return path
    }
    const startAgent = (node) => {
      const name = node.metadata.name
      const gpu = gpuPools.has(node.metadata.labels?.[POOL_LABEL])
      const root = makeHost(join(dir, "hosts", name), randomUUID())
      if (gpu) mkdirSync(dirname(dcgmFifoOf(root)), { recursive: true })
      state.hosts[name] = root
      start(
        `agent-${name}`,
        [
          ...agentRun.flags,
          agentBundle,
          "--node-name",
          name,
          "--kubeconfig",
          kubeconfig,
          "--host-root",
          root,
          "--config",
          configFor(gpu),
          "--health-address",
          "127.0.0.1:0"
        ],
        {
          ...agentRun.env,
          // The DCGM double: 8 GPUs, and its control channel in the host root (`nodemend inject <node> dcgm-*`).
          ...(gpu
            ? {
                NMDOUBLE_NVML_DEVICES: "8",
                NMDOUBLE_DCGM_GPUS: "8",
                NMDOUBLE_DCGM_POLICY_FIFO: dcgmFifoOf(root)
              }
            : {})
        }
      )
    }
    /** Starts an agent on every Ready node without one (replacements too); stops those whose node is gone. */
    const syncAgents = async () => {
      const nodes = (await core.listNode({ labelSelector: selector })).items
      const names = new Set(nodes.map((n) => n.metadata.name))
      for (const n of nodes) if (isReady(n) && !children.has(`agent-${n.metadata.name}`)) startAgent(n)
      for (const [name, child] of children)
        if (name.startsWith("agent-") && !names.has(name.slice(6))) {
          children.delete(name)
          delete state.hosts[name.slice(6)]
          await stopGroup(child)
        }
      saveState()
    }
    await syncAgents()
    // An agent opens its log sources (a file source at its end) before its first condition write, so a node that
    // shows the agent's conditions is one whose faults are read. Before that, lines written into its host are
    // history to it: a fault injected too early is never seen (CI's scenario once waited 60 s for one).
    await waitFor(
      "every agent's first condition write",
      async (seen) => {
        const nodes = (await core.listNode({ labelSelector: selector })).items
        const silent = Object.keys(state.hosts).filter(
          (name) => !agentPublished(nodes.find((n) => n.metadata.name === name))
        )
        seen({ silent })
        return silent.length === 0
      },
      { timeoutMs: 120_000, intervalMs: 250 }
    )
    say(
      `agents: ${Object.keys(state.hosts).length}, each writing its conditions (bundle ${agentBundle.replace(`${REPO_ROOT}/`, "")})`
    )

    return {
      id,
      dir,
      /** How long a launched machine takes to boot (the fake cloud's delay). */
      bootDelayMs,
      kc,
      core,
      kubeconfig,
      cloudUrl,
      metricsUrl,
      namespace,
      pools,
      selector,
      state,
      /** Names of every node of the fleet seen so far (the view keeps Events about them). */
      seen: new Set(),
      syncAgents,
      stop
    }
  } catch (e) {
    await stop()
    throw e
  }
}
