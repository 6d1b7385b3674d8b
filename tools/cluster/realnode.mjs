// The local cluster's opt-in real node (`cluster.mjs up --real-node`): kubelet and kube-proxy (built from the
// same pins and Go build cache as the control plane: tools/cluster/node), Debian's containerd + runc, the CNI
// bridge + host-local plugins and a locally built pause image. It runs the images `npm run images` builds.
// Settings and why: ../shared/reference/real-node.md and docs/local-cluster.md.
//
// Everything lives under <state>/node/ (containerd root/state/socket, kubelet root, pod logs, CNI config and IP
// allocations, pids), every process is started and stopped by pid, and `down` undoes what the node did to the
// host: pods and their network namespaces, mounts, the bridge, kube-proxy's and kubelet's iptables chains,
// cgroups, the sysctls kubelet and the CNI plugin change, and the few fixed host paths they write.
// One real node per machine: its bridge name and pod subnet are fixed.
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { request } from "node:https"
import { basename, dirname, join } from "node:path"
import { acquireLock, fmt, goArgs, goEnv, k8sLdflags, run } from "./build.mjs"
import { mountsUnder, removeCgroupTree } from "./host.mjs"
import { TOOLS_DIR, VERSIONS, cacheRoot } from "./versions.mjs"
import { requirePrereqs } from "../prereqs.mjs"

export const NODE_NAME = "nodemend-real"
export const BRIDGE = "nodemend0"
export const POD_SUBNET = "10.231.0.0/24"
/** The node's address: the bridge's own, which is also the pods' gateway and where the API server listens. */
export const NODE_IP = "10.231.0.1"
export const PAUSE_IMAGE = "localhost/nodemend/pause:1"
const NODE_COMPONENTS = ["kubelet", "kube-proxy", "pause"]
/** Host settings kubelet (panic, overcommit), the CNI bridge (ip_forward) or kube-proxy may change: restored on down. */
const SYSCTLS = [
  "vm.overcommit_memory",
  "kernel.panic",
  "kernel.panic_on_oops",
  "net.ipv4.ip_forward",
  "net.ipv4.conf.all.route_localnet",
  "net.bridge.bridge-nf-call-iptables",
  "net.netfilter.nf_conntrack_max"
]
/**
 * Host paths kubelet and containerd write outside their configured directories, and the one the agent's
 * DaemonSet creates (its hostPath for `destination: node` bundles).
 */
const FIXED_HOST_PATHS = [
  "/var/lib/kubelet",
  "/var/log/containers",
  "/var/log/pods",
  "/var/lib/cni",
  "/run/containerd",
  "/var/log/nodemend"
]
const CGROUP_ROOT = "/sys/fs/cgroup"

const log = (msg) => process.stderr.write(`[real-node] ${msg}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// --------------------------------------------------------------------------------------------- build

const NODE_DIR = join(TOOLS_DIR, "node")
const NODE_KEY_FILES = [
  "go.mod",
  "go.sum",
  "cmd/kubelet/main.go",
  "cmd/kube-proxy/main.go",
  "cmd/pause/main.go",
  "pause.Containerfile"
]

function nodeKey() {
  const h = createHash("sha256")
  h.update(JSON.stringify(VERSIONS))
  h.update(
    "node recipe 1: CGO_ENABLED=0 -trimpath, k8s version stamped; pause built by buildah --timestamp 0"
  )
  for (const f of NODE_KEY_FILES) {
    h.update(`\0${f}\0`)
    h.update(readFileSync(join(NODE_DIR, f)))
  }
  return `node-${VERSIONS.kubernetes}-${h.digest("hex").slice(0, 12)}`
}

export const nodeBinDir = () => join(cacheRoot(), nodeKey(), "bin")
const nodeComplete = (dir) =>
  NODE_COMPONENTS.every((c) => existsSync(join(dir, c))) && existsSync(join(dir, "pause.tar"))

/**
 * Builds kubelet, kube-proxy and the pause binary (one Go build cache with the control plane: only what the
 * node adds compiles) and the pause image (an OCI archive) into ~/.cache/nodemend/cluster/node-<key>/bin.
 */
export async function buildNode() {
  const dir = nodeBinDir()
  if (nodeComplete(dir)) return dir
  const keyDir = dirname(dir)
  mkdirSync(dirname(keyDir), { recursive: true })
  const lockDir = `${keyDir}.lock`
  await acquireLock(lockDir, log)
  try {
    if (nodeComplete(dir)) return dir
    const tmp = join(keyDir, "bin.partial")
    mkdirSync(tmp, { recursive: true })
    const t0 = Date.now()
    const timings = {}
    for (const c of ["kubelet", "kube-proxy", "pause"]) {
      if (existsSync(join(tmp, c))) continue
      log(`building ${c} (progress every 20 s)...`)
      const flags = c === "pause" ? "-s -w" : k8sLdflags()
      const ms = await run(
        c,
        "go",
        goArgs("build", ["-o", join(tmp, c), `./cmd/${c}`], flags),
        { cwd: NODE_DIR, env: goEnv() },
        log
      )
      timings[c] = Math.round(ms / 1000)
      log(`${c} built in ${fmt(ms)}`)
    }
    pauseImage(tmp)
    rmSync(dir, { recursive: true, force: true })
    execFileSync("mv", [tmp, dir])
    writeFileSync(
      join(keyDir, "build.json"),
      `${JSON.stringify({ versions: VERSIONS, builtAt: new Date().toISOString(), totalSeconds: Math.round((Date.now() - t0) / 1000), stepSeconds: timings }, null, 2)}\n`
    )
    for (const d of readdirSync(dirname(keyDir)))
      if (d.startsWith("node-") && !d.endsWith(".lock") && d !== basename(keyDir))
        rmSync(join(dirname(keyDir), d), { recursive: true, force: true })
    return dir
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}

/** The pause image from the pause binary: FROM scratch, built by buildah like the app images. */
function pauseImage(bin) {
  const ctx = join(bin, "pause-context")
  mkdirSync(ctx, { recursive: true })
  execFileSync("cp", [join(bin, "pause"), join(ctx, "pause")])
  const storage = join(dirname(bin), "buildah")
  const buildah = (args) =>
    execFileSync(
      "buildah",
      [
        "--root",
        join(storage, "storage"),
        "--runroot",
        join(storage, "run"),
        "--storage-driver",
        "vfs",
        ...args
      ],
      { stdio: ["ignore", "ignore", "pipe"] }
    )
  buildah([
    "bud",
    "--quiet",
    "--timestamp",
    "0",
    "-f",
    join(NODE_DIR, "pause.Containerfile"),
    "-t",
    PAUSE_IMAGE,
    ctx
  ])
  buildah([
    "push",
    "--quiet",
    "--format",
    "oci",
    PAUSE_IMAGE,
    `oci-archive:${join(bin, "pause.tar")}:${PAUSE_IMAGE}`
  ])
  rmSync(ctx, { recursive: true, force: true })
  rmSync(storage, { recursive: true, force: true })
}

// ------------------------------------------------------------------------------------------ host state

const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...opts })
const trySh = (cmd, args, opts) => {
  try {
    return sh(cmd, args, opts)
  } catch {
    return undefined
  }
}
const sysctlPath = (key) => join("/proc/sys", ...key.split("."))

function readSysctls() {
  const out = {}
  for (const k of SYSCTLS) if (existsSync(sysctlPath(k))) out[k] = readFileSync(sysctlPath(k), "utf8").trim()
  return out
}

const IPTABLES = ["iptables", "ip6tables"]

/** KUBE-* and CNI-* chains per iptables family and table: `table/chain`. */
function nodeChains(cmd) {
  const out = []
  let table = ""
  for (const line of (trySh(`${cmd}-save`, []) ?? "").split("\n")) {
    if (line.startsWith("*")) table = line.slice(1)
    const m = line.match(/^:((?:KUBE|CNI)-[\w-]+)/)
    if (m) out.push(`${table}/${m[1]}`)
  }
  return out
}

/**
 * Deletes chains the node added that `kube-proxy --cleanup` leaves (kubelet's KUBE-FIREWALL, in both families):
 * first the rules that jump to them, then the chains.
 */
function removeNewChains(before) {
  for (const cmd of IPTABLES) {
    const added = nodeChains(cmd).filter((c) => !(before[cmd] ?? []).includes(c))
    if (!added.length) continue
    let table = ""
    for (const line of (trySh(`${cmd}-save`, []) ?? "").split("\n")) {
      if (line.startsWith("*")) table = line.slice(1)
      const jump = line.match(/^-A (\S+) (.*-j ((?:KUBE|CNI)-[\w-]+))$/)
      if (jump && added.includes(`${table}/${jump[3]}`) && !added.includes(`${table}/${jump[1]}`))
        trySh("sh", ["-c", `${cmd} -w -t ${table} -D ${jump[1]} ${jump[2]}`])
    }
    for (const c of added) {
      const [t, chain] = c.split("/")
      trySh(cmd, ["-w", "-t", t, "-F", chain])
    }
    for (const c of added) {
      const [t, chain] = c.split("/")
      trySh(cmd, ["-w", "-t", t, "-X", chain])
    }
  }
}

/** What must be true of the host before a real node can start; throws naming what is missing. */
export function preflight() {
  if (process.getuid?.() !== 0) throw new Error("a real node needs root (kubelet, containerd, network setup)")
  // containerd, ctr, runc, iptables, ip, buildah, the CNI plugins: the list is tools/prereqs.mjs's (npm test installs
  // them as root on Debian); here they are only checked.
  requirePrereqs(["realnodeCluster"], { entry: "a real node" })
  if (existsSync(`/sys/class/net/${BRIDGE}`))
    throw new Error(
      `bridge ${BRIDGE} exists: another real node runs on this machine (one per machine), or a crashed one: run its cluster:down`
    )
}

/** Creates the node's bridge with its address before the API server binds to it. */
export function createBridge() {
  sh("ip", ["link", "add", BRIDGE, "type", "bridge"])
  sh("ip", ["addr", "add", `${NODE_IP}/24`, "dev", BRIDGE])
  sh("ip", ["link", "set", BRIDGE, "up"])
}

// ------------------------------------------------------------------------------------------------ API

function api(server, pki, method, path, body) {
  return new Promise((res, rej) => {
    const req = request(
      `${server}${path}`,
      {
        method,
        ca: readFileSync(join(pki, "ca.crt")),
        cert: readFileSync(join(pki, "admin.crt")),
        key: readFileSync(join(pki, "admin.key")),
        headers: { "content-type": "application/json" },
        timeout: 5000
      },
      (r) => {
        let data = ""
        r.on("data", (d) => {
          data += d
        })
        r.on("end", () => res({ status: r.statusCode, body: data }))
      }
    )
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", rej)
    req.end(body ? JSON.stringify(body) : undefined)
  })
}

/** `call` again while it times out or answers 429/5xx, for up to `forMs`; then its last answer (or error). */
async function retrySlow(what, call, forMs = 60_000) {
  const deadline = Date.now() + forMs
  for (;;) {
    const r = await call().catch((e) => ({ status: 0, body: e.message }))
    const transient = r.status === 0 || r.status === 429 || r.status >= 500
    if (!transient || Date.now() > deadline) return r
    console.log(`[cluster] ${what}: ${r.status || r.body}; trying again`)
    await sleep(1000)
  }
}

// ---------------------------------------------------------------------------------------------- start

export function nodePaths(stateDir) {
  const root = join(stateDir, "node")
  return {
    root,
    pids: join(root, "pids"),
    logs: join(stateDir, "logs"),
    containerd: join(root, "containerd"),
    sock: join(root, "containerd", "containerd.sock"),
    kubelet: join(root, "kubelet"),
    podLogs: join(root, "pod-logs"),
    cni: join(root, "cni"),
    config: join(root, "config"),
    hostState: join(root, "host-state.json")
  }
}

function startDaemon(n, name, cmd, args) {
  const fd = openSync(join(n.logs, `${name}.log`), "a")
  writeFileSync(fd, `\n# ${new Date().toISOString()} ${cmd} ${args.join(" ")}\n`)
  const child = spawn(cmd, args, {
    cwd: n.root,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { PATH: process.env.PATH }
  })
  closeSync(fd)
  child.unref()
  writeFileSync(join(n.pids, `${name}.pid`), String(child.pid))
  return child.pid
}

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z"
  } catch {
    return false
  }
}

async function waitUntil(what, n, name, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  const pid = Number(trySh("cat", [join(n.pids, `${name}.pid`)]) ?? 0)
  let last = ""
  while (Date.now() < deadline) {
    if (pid && !alive(pid))
      throw new Error(`${name} exited while waiting for ${what}; see ${join(n.logs, `${name}.log`)}`)
    try {
      const r = await probe()
      if (r === true) return
      last = String(r)
    } catch (e) {
      last = e.message
    }
    await sleep(200)
  }
  throw new Error(`timed out waiting for ${what} (${last}); see ${join(n.logs, `${name}.log`)}`)
}

/** Issues the node's client (system:node:<name>) and serving (node IP SAN) certificates and kube-proxy's. */
function nodePki(pki, issue) {
  const client =
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
  issue(pki, "node-client", `/O=system:nodes/CN=system:node:${NODE_NAME}`, client)
  issue(
    pki,
    "node-serving",
    `/O=system:nodes/CN=system:node:${NODE_NAME}`,
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:${NODE_IP},DNS:${NODE_NAME}\n`
  )
  issue(pki, "kube-proxy", "/CN=system:kube-proxy", client)
}

const ctr = (n, args) => sh("ctr", ["--address", n.sock, "--namespace", "k8s.io", ...args])

/** Imports an OCI archive into the node's containerd under `ref` (its fully qualified name). */
export function importImage(stateDir, archive, ref) {
  const n = nodePaths(stateDir)
  // `ctr import` names an OCI archive's image after its index's ref annotation: buildah writes the full reference.
  ctr(n, ["images", "import", archive])
  const listed = ctr(n, ["images", "list", "-q"]).split("\n")
  if (!listed.includes(ref))
    throw new Error(`importing ${archive} did not create ${ref} (have: ${listed.join(", ")})`)
}

/**
 * Starts containerd, kubelet and kube-proxy for one real node against a running control plane whose API
 * server listens on NODE_IP, and waits until the Node is Ready. Returns what `stopRealNode` needs.
 */
export async function startRealNode({ stateDir, server, pki, issue, kubeconfigYaml, bin }) {
  const t0 = Date.now()
  const n = nodePaths(stateDir)
  for (const d of [
    n.pids,
    n.containerd,
    n.kubelet,
    n.podLogs,
    join(n.cni, "net.d"),
    join(n.cni, "ipam"),
    n.config
  ])
    mkdirSync(d, { recursive: true })
  const phases = {}
  nodePki(pki, issue)
  const cfg = (f) => join(n.config, f)
  writeFileSync(cfg("kubelet.kubeconfig"), kubeconfigYaml(server, pki, "node-client"), { mode: 0o600 })
  writeFileSync(cfg("kube-proxy.kubeconfig"), kubeconfigYaml(server, pki, "kube-proxy"), { mode: 0o600 })

  // The API server reaches the kubelet (logs, exec, node proxy) as kube-apiserver-kubelet-client, as kubeadm binds it.
  // Tried again for 60 s on a timeout, 429 or 5xx: a fresh API server on a loaded machine (the last lane of
  // `npm test`) may answer its first writes slowly.
  const crb = await retrySlow("creating the kubelet-client binding", () =>
    api(server, pki, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "nodemend:kube-apiserver-kubelet-client" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "system:kubelet-api-admin"
      },
      subjects: [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "kube-apiserver-kubelet-client" }
      ]
    })
  )
  if (crb.status !== 201 && crb.status !== 409)
    throw new Error(`creating the kubelet-client binding: ${crb.status} ${crb.body}`)

  writeFileSync(
    join(n.cni, "net.d", "10-nodemend.conflist"),
    `${JSON.stringify(
      {
        cniVersion: "1.0.0",
        name: "nodemend",
        plugins: [
          {
            type: "bridge",
            bridge: BRIDGE,
            isGateway: true,
            // Pods talk to the node and each other only; no NAT rules to leave behind.
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: "host-local",
              ranges: [[{ subnet: POD_SUBNET, gateway: NODE_IP }]],
              routes: [{ dst: "0.0.0.0/0" }],
              dataDir: join(n.cni, "ipam")
            }
          }
        ]
      },
      null,
      2
    )}\n`
  )
  writeFileSync(
    cfg("containerd.toml"),
    `version = 2
root = "${join(n.containerd, "root")}"
state = "${join(n.containerd, "state")}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${n.sock}"
[ttrpc]
  address = "${n.sock}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(n.containerd, "opt")}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # runc cannot lower a container's oom_score_adj below containerd's without CAP_SYS_RESOURCE.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "${join(n.containerd, "runc")}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${join(n.cni, "net.d")}"
`
  )
  writeFileSync(cfg("resolv.conf"), `nameserver ${NODE_IP}\noptions ndots:1\n`)
  const [kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics] = [10250, 10248, 10256, 10249]
  writeFileSync(
    cfg("kubelet.yaml"),
    `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 on these machines (KEP-5573), and containerd 1.6 has no RuntimeConfig: kubelet's own driver.
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${n.sock}
failSwapOn: false
address: ${NODE_IP}
port: ${kubeletPort}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${kubeletHealthz}
tlsCertFile: ${join(pki, "node-serving.crt")}
tlsPrivateKeyFile: ${join(pki, "node-serving.key")}
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: ${join(pki, "ca.crt")} }
authorization: { mode: Webhook }
resolvConf: ${cfg("resolv.conf")}
podLogsDir: ${n.podLogs}
clusterDomain: cluster.local
# No KUBE-FIREWALL etc. chains from kubelet: kube-proxy owns the node's iptables rules.
makeIPTablesUtilChains: false
protectKernelDefaults: false
# A developer's disk may be fuller than kubelet's defaults allow: never evict or GC the imported images.
evictionHard: { memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
registerNode: true
`
  )
  writeFileSync(
    cfg("kube-proxy.yaml"),
    `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: { kubeconfig: ${cfg("kube-proxy.kubeconfig")} }
hostnameOverride: ${NODE_NAME}
clusterCIDR: ${POD_SUBNET}
healthzBindAddress: 127.0.0.1:${proxyHealthz}
metricsBindAddress: 127.0.0.1:${proxyMetrics}
nodePortAddresses: ["${NODE_IP}/32"]
iptables: { localhostNodePorts: false }
# Leave the host's conntrack sysctls alone.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
`
  )

  // The agent mounts the host's / with HostToContainer propagation, which needs / to be a shared (or slave)
  // mount, as it is under systemd; where PID 1 left it private, only / itself (not its submounts) is made
  // shared, and `down` makes it private again.
  if (!rootShared()) sh("mount", ["--make-shared", "/"])
  startDaemon(n, "containerd", "containerd", ["--config", cfg("containerd.toml")])
  await waitUntil(
    "containerd",
    n,
    "containerd",
    async () => existsSync(n.sock) && trySh("ctr", ["--address", n.sock, "version"]) !== undefined
  )
  phases.containerd = (Date.now() - t0) / 1000
  importImage(stateDir, join(bin, "pause.tar"), PAUSE_IMAGE)

  startDaemon(n, "kubelet", join(bin, "kubelet"), [
    `--config=${cfg("kubelet.yaml")}`,
    `--kubeconfig=${cfg("kubelet.kubeconfig")}`,
    `--root-dir=${n.kubelet}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${NODE_IP}`,
    "--node-labels=nodemend.io/real-node=true",
    // kubelet's own -999 needs CAP_SYS_RESOURCE, which root lacks here.
    "--oom-score-adj=0",
    "--v=1"
  ])
  startDaemon(n, "kube-proxy", join(bin, "kube-proxy"), [`--config=${cfg("kube-proxy.yaml")}`, "--v=1"])
  await waitUntil(
    `Node ${NODE_NAME} Ready`,
    n,
    "kubelet",
    async () => {
      const r = await api(server, pki, "GET", `/api/v1/nodes/${NODE_NAME}`)
      if (r.status !== 200) return `${r.status}`
      const ready = JSON.parse(r.body).status?.conditions?.find((c) => c.type === "Ready")
      return ready?.status === "True" || `Ready=${ready?.status}: ${ready?.message}`
    },
    120_000
  )
  phases.nodeReady = (Date.now() - t0) / 1000
  return { nodeName: NODE_NAME, nodeIP: NODE_IP, phases, kubeletPort }
}

// ----------------------------------------------------------------------------------------------- stop

async function stopPid(n, name) {
  const f = join(n.pids, `${name}.pid`)
  if (!existsSync(f)) return false
  const pid = Number(readFileSync(f, "utf8"))
  if (!(pid > 0) || !alive(pid)) return false
  try {
    process.kill(-pid, "SIGTERM")
  } catch {
    try {
      process.kill(pid, "SIGTERM")
    } catch {}
  }
  const t0 = Date.now()
  while (alive(pid) && Date.now() - t0 < 10_000) await sleep(50)
  if (alive(pid)) {
    try {
      process.kill(-pid, "SIGKILL")
    } catch {
      process.kill(pid, "SIGKILL")
    }
    while (alive(pid) && Date.now() - t0 < 15_000) await sleep(50)
  }
  return true
}

/** Stops the node's API clients, kubelet and kube-proxy, by pid; returns the names of those it stopped. */
export async function stopNodeClients(stateDir) {
  const n = nodePaths(stateDir)
  const stopped = await Promise.all(
    ["kubelet", "kube-proxy"].map(async (c) => ((await stopPid(n, c)) ? c : ""))
  )
  return stopped.filter(Boolean)
}

/** containerd-shim processes of this node (they outlive containerd): their cmdline names our socket. */
function shims(n) {
  const out = []
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0")
      if (argv[0]?.includes("containerd-shim") && argv.includes(n.sock)) out.push(Number(d))
    } catch {}
  }
  return out
}

/** Whether the host's "/" mount propagates (shared), from this process's mountinfo. */
const rootShared = () =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .some((l) => l.split(" ")[4] === "/" && / shared:\d+/.test(l.split(" - ")[0] ?? ""))

/** Records host state the node will change (sysctls, which fixed paths pre-exist); `up` calls it first. */
export function recordHostState(stateDir) {
  const n = nodePaths(stateDir)
  mkdirSync(n.root, { recursive: true })
  const state = {
    sysctls: readSysctls(),
    preexisting: FIXED_HOST_PATHS.filter((p) => existsSync(p)),
    chains: Object.fromEntries(IPTABLES.map((cmd) => [cmd, nodeChains(cmd)])),
    rootShared: rootShared(),
    cgroups: readdirSync(CGROUP_ROOT).filter((c) => existsSync(join(CGROUP_ROOT, c, "kubepods")))
  }
  if (state.cgroups.length)
    throw new Error(`kubepods cgroups exist (${state.cgroups.join(", ")}): another kubelet runs here`)
  writeFileSync(n.hostState, `${JSON.stringify(state, null, 2)}\n`)
}

/**
 * Stops the node and undoes its host changes. Order: kubelet and kube-proxy (nothing restarts pods), every
 * pod's task and container through containerd, containerd and its shims, kube-proxy's iptables rules, mounts
 * (netns, overlay, kubelet's), the bridge, cgroups, fixed host paths, sysctls. Returns what it found left over.
 */
export async function stopRealNode(stateDir, bin, { quiet = false } = {}) {
  const n = nodePaths(stateDir)
  if (!existsSync(n.root)) return []
  const say = quiet ? () => {} : log
  const stopped = []
  for (const c of ["kubelet", "kube-proxy"]) if (await stopPid(n, c)) stopped.push(c)
  if (existsSync(n.sock)) {
    const tasks = (trySh("ctr", ["--address", n.sock, "-n", "k8s.io", "tasks", "list", "-q"]) ?? "")
      .split("\n")
      .filter(Boolean)
    for (const t of tasks)
      trySh("ctr", ["--address", n.sock, "-n", "k8s.io", "tasks", "kill", "-a", "-s", "SIGKILL", t])
    await sleep(tasks.length ? 500 : 0)
    for (const t of tasks) trySh("ctr", ["--address", n.sock, "-n", "k8s.io", "tasks", "delete", "-f", t])
    const containers = (trySh("ctr", ["--address", n.sock, "-n", "k8s.io", "containers", "list", "-q"]) ?? "")
      .split("\n")
      .filter(Boolean)
    for (const c of containers) trySh("ctr", ["--address", n.sock, "-n", "k8s.io", "containers", "delete", c])
  }
  if (await stopPid(n, "containerd")) stopped.push("containerd")
  for (const pid of shims(n)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {}
  }
  // Containers a crashed shim left (runc state under our root).
  const runcRoot = join(n.containerd, "runc", "k8s.io")
  if (existsSync(runcRoot))
    for (const id of readdirSync(runcRoot)) trySh("runc", ["--root", runcRoot, "delete", "--force", id])
  if (bin && existsSync(join(bin, "kube-proxy"))) trySh(join(bin, "kube-proxy"), ["--cleanup"])
  for (const m of mountsUnder([n.root])) trySh("umount", ["-l", m])
  if (existsSync(`/sys/class/net/${BRIDGE}`)) trySh("ip", ["link", "del", BRIDGE])
  for (const c of readdirSync(CGROUP_ROOT)) removeCgroupTree(join(CGROUP_ROOT, c, "kubepods"))

  let host = { sysctls: {}, preexisting: FIXED_HOST_PATHS, chains: {} }
  try {
    host = JSON.parse(readFileSync(n.hostState, "utf8"))
  } catch {}
  removeNewChains(host.chains)
  if (host.rootShared === false && rootShared()) trySh("mount", ["--make-private", "/"])
  for (const p of FIXED_HOST_PATHS) {
    if (!host.preexisting.includes(p)) {
      for (const m of mountsUnder([p])) trySh("umount", ["-l", m])
      rmSync(p, { recursive: true, force: true })
    }
  }
  // Container log links kubelet made in a pre-existing /var/log/containers point into our pod log dir.
  if (existsSync("/var/log/containers"))
    for (const f of readdirSync("/var/log/containers")) {
      const link = join("/var/log/containers", f)
      try {
        if (readlinkSync(link).startsWith(`${n.podLogs}/`)) rmSync(link)
      } catch {}
    }
  for (const [k, v] of Object.entries(host.sysctls))
    try {
      if (readFileSync(sysctlPath(k), "utf8").trim() !== v) writeFileSync(sysctlPath(k), v)
    } catch (e) {
      say(`could not restore ${k}=${v}: ${e.message}`)
    }
  const left = leftovers(stateDir)
  if (left.length) say(`left over after stopping the real node: ${left.join("; ")}`)
  // Kept with the logs (which outlive `down`): what a test run checks, and where a user looks.
  mkdirSync(n.logs, { recursive: true })
  writeFileSync(
    join(n.logs, "real-node-down.json"),
    `${JSON.stringify({ at: new Date().toISOString(), left }, null, 2)}\n`
  )
  rmSync(n.root, { recursive: true, force: true })
  if (stopped.length) say(`stopped ${stopped.join(" ")}`)
  return left
}

/** What the last `down` of `stateDir`'s real node could not undo (logs/real-node-down.json), or undefined. */
export function lastDownLeftovers(stateDir) {
  try {
    return JSON.parse(readFileSync(join(nodePaths(stateDir).logs, "real-node-down.json"), "utf8")).left
  } catch {
    return undefined
  }
}

/** What a stopped real node must not leave on the host (empty when `down` cleaned up). */
export function leftovers(stateDir) {
  const n = nodePaths(stateDir)
  const out = []
  if (existsSync(`/sys/class/net/${BRIDGE}`)) out.push(`bridge ${BRIDGE}`)
  let before = {}
  try {
    before = JSON.parse(readFileSync(n.hostState, "utf8")).chains ?? {}
  } catch {}
  for (const cmd of IPTABLES) {
    const added = nodeChains(cmd).filter((c) => !(before[cmd] ?? []).includes(c))
    if (added.length) out.push(`${cmd} chains ${added.join(" ")}`)
  }
  try {
    if (JSON.parse(readFileSync(n.hostState, "utf8")).rootShared === false && rootShared())
      out.push("/ left shared")
  } catch {}
  const mounts = mountsUnder([n.root])
  if (mounts.length) out.push(`mounts ${mounts.join(" ")}`)
  for (const c of readdirSync(CGROUP_ROOT))
    if (existsSync(join(CGROUP_ROOT, c, "kubepods"))) out.push(`cgroup ${c}/kubepods`)
  if (shims(n).length) out.push(`shims ${shims(n).join(" ")}`)
  try {
    const host = JSON.parse(readFileSync(n.hostState, "utf8"))
    for (const p of FIXED_HOST_PATHS)
      if (!host.preexisting.includes(p) && existsSync(p)) out.push(`path ${p}`)
    for (const [k, v] of Object.entries(host.sysctls)) {
      const now = existsSync(sysctlPath(k)) ? readFileSync(sysctlPath(k), "utf8").trim() : v
      if (now !== v) out.push(`sysctl ${k}=${now} (was ${v})`)
    }
  } catch {}
  return out
}
