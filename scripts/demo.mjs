// `npm start`: nodemend end to end on the embedded default — a real local control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok), the fake cloud (EC2 + ARC on loopback, instances are kwok
// Nodes), the repair controller with `cloudProvider: aws` pointed at the fake cloud, and the node agent for one
// GPU node (NVML from the test double, kernel log in a temp host root). A GPU falls off the bus (XID 79 in the
// kernel log); the agent sets AcceleratedHardwareReady=False, the controller waits out the toleration, taints,
// drains, terminates the instance through EC2 and waits for the replacement to be Ready. The agent and the
// controller run as they ship: their bundles (built here as their build scripts build them) with the V8 flags
// and environment of their manifests in deploy/.
import { spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { buildAsScripted, deployedRuntime } from "../tools/bundle/shipped.mjs"
import { build } from "../tools/cluster/build.mjs"
import { down, up } from "../tools/cluster/cluster.mjs"
import { REPO_ROOT } from "../tools/cluster/versions.mjs"

const NODE = process.execPath
const DEMO = join(REPO_ROOT, ".nodemend", "demo")
const POOL = "demo-gpu"
const REGION = "us-west-2"
const CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/nodemend-demo"
const t0 = Date.now()
const say = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const children = []

/** `node` arguments and environment: a package's sources (the fake cloud, a test double) ... */
const fromSource = (entry) => ({ nodeArgs: ["--conditions=source", entry], env: {} })

/** ... or a shipped binary: its bundle, built as its build script builds it, run as deploy/ runs it. */
const shipped = (pkg, manifest) => {
  const { flags, env } = deployedRuntime(manifest)
  return { nodeArgs: [...flags, buildAsScripted(join(REPO_ROOT, "packages", pkg))], env }
}

const start = (name, { nodeArgs, env: runtimeEnv }, args, env = {}) => {
  const log = join(DEMO, `${name}.log`)
  const child = spawn(NODE, [...nodeArgs, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...runtimeEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout.on("data", (d) => appendFileSync(log, d))
  child.stderr.on("data", (d) => appendFileSync(log, d))
  children.push(child)
  say(`started ${name} (pid ${child.pid}, log .nodemend/demo/${name}.log)`)
  return child
}

const waitFor = async (what, probe, timeoutMs = 120_000) => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await probe().catch(() => undefined)
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}

const condition = (node, type) => node?.status?.conditions?.find((c) => c.type === type)

let cluster
const cleanup = async () => {
  for (const c of children) c.kill("SIGTERM")
  await sleep(500)
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
  if (cluster && !cluster.reused) await down({ quiet: true })
}
process.once("SIGINT", () => cleanup().then(() => process.exit(130)))

try {
  rmSync(DEMO, { recursive: true, force: true })
  mkdirSync(DEMO, { recursive: true })
  say("building the control plane (cached after the first run)")
  await build()
  cluster = await up({})
  say(
    `cluster ${cluster.reused ? "reused" : "started"}: ${cluster.server} (kubeconfig ${cluster.kubeconfig})`
  )
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)

  // A reused cluster may hold an earlier run's pool and workload: remove them (namespaces are per run).
  const run = Date.now().toString(36)
  for (const n of (await core.listNode({ labelSelector: `karpenter.sh/nodepool=${POOL}` })).items)
    await core.deleteNode({ name: n.metadata.name }).catch(() => undefined)
  for (const n of (await core.listNamespace({ labelSelector: "nodemend.io/demo=true" })).items) {
    for (const p of (await core.listNamespacedPod({ namespace: n.metadata.name })).items)
      await core
        .deleteNamespacedPod({ namespace: n.metadata.name, name: p.metadata.name, gracePeriodSeconds: 0 })
        .catch(() => undefined)
    await core.deleteNamespace({ name: n.metadata.name }).catch(() => undefined)
  }

  // The fake cloud: EC2 Query + ARC REST-JSON on loopback; each instance is a kwok Node.
  const urlFile = join(DEMO, "fake-cloud.url")
  start("fake-cloud", fromSource("packages/fake-cloud/src/main.ts"), [
    "serve",
    "--kubeconfig",
    cluster.kubeconfig,
    "--url-file",
    urlFile,
    "--boot-delay-ms",
    "1500",
    "--cluster-arn",
    CLUSTER_ARN
  ])
  const cloudUrl = await waitFor("the fake cloud", async () =>
    existsSync(urlFile) ? readFileSync(urlFile, "utf8").trim() : undefined
  )
  const awsEnv = { AWS_ACCESS_KEY_ID: "demo", AWS_SECRET_ACCESS_KEY: "demo", AWS_REGION: REGION }
  Object.assign(process.env, awsEnv)

  // A GPU NodePool of 5 p5.48xlarge instances, launched through EC2 RunInstances.
  const { EC2Client, RunInstancesCommand } = await import("@aws-sdk/client-ec2")
  const ec2 = new EC2Client({
    region: REGION,
    endpoint: cloudUrl,
    credentials: { accessKeyId: "demo", secretAccessKey: "demo" }
  })
  const launched = await ec2.send(
    new RunInstancesCommand({
      MinCount: 5,
      MaxCount: 5,
      LaunchTemplate: { LaunchTemplateId: "lt-0123456789abcdef0", Version: "1" },
      InstanceType: "p5.48xlarge",
      Placement: { AvailabilityZone: `${REGION}a` },
      TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: "karpenter.sh/nodepool", Value: POOL }] }]
    })
  )
  say(`RunInstances: ${launched.Instances.map((i) => i.InstanceId).join(" ")}`)
  const poolNodes = await waitFor("5 Ready nodes in the pool", async () => {
    const list = await core.listNode({ labelSelector: `karpenter.sh/nodepool=${POOL}` })
    const ready = list.items.filter((n) => condition(n, "Ready")?.status === "True")
    return ready.length >= 5 ? ready : undefined
  })
  const victim = poolNodes[0].metadata.name
  say(`pool ${POOL}: ${poolNodes.map((n) => n.metadata.name).join(", ")} — the agent runs on ${victim}`)

  // A workload on the victim, protected by a PodDisruptionBudget that allows one eviction.
  const ns = `demo-${run}`
  await core.createNamespace({ body: { metadata: { name: ns, labels: { "nodemend.io/demo": "true" } } } })
  for (const i of [0, 1])
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: `trainer-${i}`, labels: { app: "trainer" } },
        spec: {
          nodeName: victim,
          tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" }],
          containers: [{ name: "trainer", image: "trainer:demo" }]
        }
      }
    })
  const { PolicyV1Api } = await import("@kubernetes/client-node")
  await kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: {
      metadata: { name: "trainer" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "trainer" } } }
    }
  })

  // The node agent for the victim: a temp host root with a kernel log, a boot id and NVML (the test double, 8 GPUs).
  const { buildGpuDoubles } = await import("../packages/dcgm-native/test/double/build.ts")
  const doubles = buildGpuDoubles()
  const hostRoot = join(DEMO, "host")
  mkdirSync(join(hostRoot, "dev"), { recursive: true })
  mkdirSync(join(hostRoot, "proc/sys/kernel/random"), { recursive: true })
  writeFileSync(join(hostRoot, "dev/kmsg"), "")
  writeFileSync(join(hostRoot, "proc/sys/kernel/random/boot_id"), "7d9c1f52-demo-boot-0001\n")
  writeFileSync(
    join(DEMO, "agent.yaml"),
    [
      "monitors:",
      "  nvidia:",
      `    nvmlLibraryPath: ${doubles.nvml}`,
      `    dcgmLibraryPath: ${join(DEMO, "no-dcgm", "libdcgm.so.4")}`,
      "    pollSeconds: 30",
      ""
    ].join("\n")
  )
  start(
    "agent",
    shipped("agent", "agent/daemonset.yaml"),
    [
      "--node-name",
      victim,
      "--kubeconfig",
      cluster.kubeconfig,
      "--host-root",
      hostRoot,
      "--config",
      join(DEMO, "agent.yaml"),
      "--health-address",
      "127.0.0.1:0"
    ],
    { NMDOUBLE_NVML_DEVICES: "8" }
  )
  await waitFor("AcceleratedHardwareReady=True from the agent", async () => {
    const c = condition(await core.readNode({ name: victim }), "AcceleratedHardwareReady")
    return c?.status === "True" ? c : undefined
  })
  say(
    `agent: AcceleratedHardwareReady=True (${condition(await core.readNode({ name: victim }), "AcceleratedHardwareReady").reason})`
  )

  await waitFor("the agent's log readers", async () =>
    readFileSync(join(DEMO, "agent.log"), "utf8").includes("log monitors")
  )

  // The repair controller: cloudProvider aws against the fake cloud, a 15 s toleration for the demo.
  writeFileSync(
    join(DEMO, "controller.yaml"),
    [
      "cloudProvider: aws",
      `namespace: ${ns}`,
      `nodeSelector: karpenter.sh/nodepool=${POOL}`,
      "policies:",
      '  - { conditionType: AcceleratedHardwareReady, status: "False", tolerationSeconds: 15 }',
      "drain: { deadlineSeconds: 20, onDeadline: force, evictionBackoffInitialMs: 500, evictionBackoffMaxMs: 2000 }",
      "zonalShift: { refreshSeconds: 2 }",
      `leaderElection: { enabled: true, leaseName: nodemend-demo-${run} }`,
      "replacement: { timeoutSeconds: 120 }",
      "server: { port: 0 }",
      "aws:",
      `  region: ${REGION}`,
      `  clusterArn: ${CLUSTER_ARN}`,
      `  endpoints: { ec2: "${cloudUrl}", arcZonalShift: "${cloudUrl}" }`,
      "  terminationWaitSeconds: 60",
      ""
    ].join("\n")
  )
  start(
    "controller",
    shipped("repair-controller", "controller/deployment.yaml"),
    ["--config", join(DEMO, "controller.yaml"), "--kubeconfig", cluster.kubeconfig],
    awsEnv
  )
  await sleep(3000)

  // The fault: XID 79 (GPU has fallen off the bus), as the NVIDIA driver writes it to the kernel log.
  const faultAt = Date.now()
  appendFileSync(
    join(hostRoot, "dev/kmsg"),
    "4,1842,91234567,-;NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n"
  )
  say("fault: kernel log 'NVRM: Xid (PCI:0000:53:00): 79, ... GPU has fallen off the bus.'")
  const bad = await waitFor("AcceleratedHardwareReady=False", async () => {
    const c = condition(await core.readNode({ name: victim }), "AcceleratedHardwareReady")
    return c?.status === "False" ? c : undefined
  })
  say(
    `agent: AcceleratedHardwareReady=False reason=${bad.reason} (${Date.now() - faultAt} ms after the line was written)`
  )

  // Follow the repair through the Node's events until the replacement is Ready.
  const seen = new Set()
  const printEvents = async () => {
    const evs = (
      await core.listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${victim}` })
    ).items
    for (const e of evs.sort((a, b) =>
      String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp))
    )) {
      const key = e.metadata.uid
      if (seen.has(key)) continue
      seen.add(key)
      say(`event ${e.reason}: ${e.message ?? e.note ?? ""}`)
    }
  }
  await waitFor(
    `${victim} repaired and deleted`,
    async () => {
      await printEvents()
      return core.readNode({ name: victim }).then(
        () => false,
        () => true
      )
    },
    240_000
  )
  const replacement = await waitFor(
    "the replacement Ready",
    async () => {
      const list = await core.listNode({ labelSelector: `karpenter.sh/nodepool=${POOL}` })
      const fresh = list.items.filter(
        (n) =>
          !poolNodes.some((p) => p.metadata.name === n.metadata.name) &&
          condition(n, "Ready")?.status === "True"
      )
      return fresh[0]
    },
    180_000
  )
  await printEvents().catch(() => undefined)
  say(`replacement ${replacement.metadata.name} (${replacement.spec.providerID}) is Ready`)
  say(
    `done: fault -> replacement Ready in ${((Date.now() - faultAt) / 1000).toFixed(1)} s (toleration 15 s). Logs in .nodemend/demo/`
  )
  await cleanup()
  process.exit(0)
} catch (e) {
  console.error(`demo failed: ${e?.stack ?? e}`)
  await cleanup()
  process.exit(1)
}
