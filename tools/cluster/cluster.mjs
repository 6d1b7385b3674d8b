#!/usr/bin/env node
// Starts / stops nodemend's local Kubernetes cluster: real etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok processes on loopback, built by build.mjs. No Docker. Opt-in (`--real-node` or
// NODEMEND_REAL_NODE=1): one real node (kubelet, kube-proxy, containerd, runc, CNI bridge; realnode.mjs) next to
// the kwok nodes; the API server then listens on the node's bridge address instead of loopback. Karpenter's kwok
// provider (karpenter.mjs) runs out of cluster next to them unless `--no-karpenter` / NODEMEND_KARPENTER=0.
// `--prometheus` (or NODEMEND_PROMETHEUS=1; npm test's cluster phase) also starts a real Prometheus with nodemend's
// alert rules, scraping what tests list as the PodMonitors' targets (prometheus.mjs; cluster.json `prometheus`).
//
//   node tools/cluster/cluster.mjs up     [--state-dir DIR] [--no-build] [--real-node] [--no-karpenter] [--prometheus]
//   node tools/cluster/cluster.mjs down   [--state-dir DIR] [--purge]
//   node tools/cluster/cluster.mjs status [--state-dir DIR]
//
// State (default <repo>/.nodemend, or $NODEMEND_STATE_DIR): kubeconfig, pki/, config/, etcd-data/,
// logs/<component>.log, pids/<component>.pid, cluster.json.
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { request } from "node:https"
import { get as httpGet } from "node:http"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build, isCached } from "./build.mjs"
import {
  NODE_IP,
  buildNode,
  createBridge,
  importImage,
  preflight,
  recordHostState,
  startRealNode,
  stopNodeClients,
  stopRealNode
} from "./realnode.mjs"
import {
  KARPENTER,
  buildKarpenter,
  isKarpenterCached,
  karpenterBinDir,
  karpenterCrdFiles,
  karpenterDir
} from "./karpenter.mjs"
import { PROMETHEUS_BIN_DIR, prepare as preparePrometheus } from "./prometheus.mjs"
import { REPO_ROOT, TOOLS_DIR, VERSIONS, binDir, cacheRoot } from "./versions.mjs"

/** Label (and annotation) that marks a Node as a kwok fake node managed by this cluster's kwok. */
export const FAKE_NODE_LABEL = "kwok.x-k8s.io/node"
export const FAKE_NODE_VALUE = "fake"
const SERVICE_CIDR = "10.96.0.0/16"
const SERVICE_IP = "10.96.0.1"
/**
 * Karpenter's feature gates: its own repair ON. Its kwok RepairPolicies (Ready False/Unknown 10m,
 * KWOKUnhealthy=True 30s, KWOKRebootRequired=True 30s) are disjoint from nodemend's condition types, one of the two
 * supported coexistence setups.
 */
export const KARPENTER_FEATURE_GATES = "NodeRepair=true"
/** The KWOKNodeClass `up` creates; NodePools reference it (group karpenter.kwok.sh, kind KWOKNodeClass). */
export const KARPENTER_NODE_CLASS = "default"
/** Stop order (reverse of start order). */
const STOP_ORDER = [
  "prometheus",
  "karpenter",
  "kwok",
  "kube-scheduler",
  "kube-controller-manager",
  "kube-apiserver",
  "etcd"
]

function log(msg) {
  process.stderr.write(`[cluster] ${msg}\n`)
}

export function defaultStateDir() {
  return resolve(process.env.NODEMEND_STATE_DIR || join(REPO_ROOT, ".nodemend"))
}

function paths(stateDir) {
  return {
    stateDir,
    kubeconfig: join(stateDir, "kubeconfig"),
    pki: join(stateDir, "pki"),
    config: join(stateDir, "config"),
    etcdData: join(stateDir, "etcd-data"),
    logs: join(stateDir, "logs"),
    pids: join(stateDir, "pids"),
    prometheus: join(stateDir, "prometheus"),
    info: join(stateDir, "cluster.json")
  }
}

// ---------------------------------------------------------------------------------------------- PKI

function openssl(args, cwd) {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] })
}

function serial() {
  return `0x${randomBytes(16)
    .toString("hex")
    .replace(/^[89a-f]/, "1")}`
}

export function issue(dir, name, subject, ext, ca = "ca") {
  openssl(
    ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      subject
    ]),
    dir
  )
  writeFileSync(join(dir, `${name}.ext`), ext)
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-set_serial",
      serial()
    ].concat(["-days", "365", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.crt`]),
    dir
  )
  rmSync(join(dir, `${name}.csr`))
  rmSync(join(dir, `${name}.ext`))
}

const CLIENT_EXT =
  "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"

export function generatePki(dir, extraSans = []) {
  mkdirSync(dir, { recursive: true })
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"], dir)
  openssl(
    ["req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=nodemend-local-ca", "-days", "3650", "-sha256"]
      .concat(["-set_serial", serial(), "-out", "ca.crt"])
      .concat([
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign"
      ]),
    dir
  )
  const sans = [
    "IP:127.0.0.1",
    `IP:${SERVICE_IP}`,
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
    ...extraSans
  ]
  issue(
    dir,
    "apiserver",
    "/CN=kube-apiserver",
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${sans.join(",")}\n`
  )
  issue(dir, "admin", "/O=system:masters/CN=nodemend-admin", CLIENT_EXT)
  issue(dir, "kube-controller-manager", "/CN=system:kube-controller-manager", CLIENT_EXT)
  issue(dir, "kube-scheduler", "/CN=system:kube-scheduler", CLIENT_EXT)
  // kwok plays every kubelet (node status, leases, pod status of all fake nodes), like kwokctl's admin identity.
  issue(dir, "kwok", "/O=system:masters/CN=system:kwok-controller", CLIENT_EXT)
  issue(
    dir,
    "apiserver-kubelet-client",
    "/O=kube-apiserver-kubelet-client/CN=kube-apiserver-kubelet-client",
    CLIENT_EXT
  )
  // Front-proxy (aggregation layer) CA and client, so request-header authentication is configured like kubeadm's.
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "front-proxy-ca.key"], dir)
  openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      "front-proxy-ca.key",
      "-subj",
      "/CN=nodemend-front-proxy-ca",
      "-days",
      "3650"
    ]
      .concat(["-sha256", "-set_serial", serial(), "-out", "front-proxy-ca.crt"])
      .concat([
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign"
      ]),
    dir
  )
  issue(dir, "front-proxy-client", "/CN=front-proxy-client", CLIENT_EXT, "front-proxy-ca")
  // Service-account token signing key.
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key"], dir)
  openssl(["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir)
}

export function kubeconfigYaml(server, pki, user) {
  const b64 = (f) => readFileSync(join(pki, f)).toString("base64")
  return `apiVersion: v1
kind: Config
clusters:
- name: nodemend-local
  cluster:
    server: ${server}
    certificate-authority-data: ${b64("ca.crt")}
users:
- name: ${user}
  user:
    client-certificate-data: ${b64(`${user}.crt`)}
    client-key-data: ${b64(`${user}.key`)}
contexts:
- name: nodemend-local
  context:
    cluster: nodemend-local
    user: ${user}
current-context: nodemend-local
`
}

// ------------------------------------------------------------------------------------------ helpers

/** A free port on `host`; undefined host: free on every interface (for servers that bind ":<port>"). */
function freePort(host) {
  return new Promise((res, rej) => {
    const srv = createServer()
    srv.unref()
    srv.on("error", rej)
    srv.listen(0, host, () => {
      const { port } = srv.address()
      srv.close(() => res(port))
    })
  })
}

async function freePorts(n, host = "127.0.0.1") {
  const out = new Set()
  while (out.size < n) out.add(await freePort(host))
  return [...out]
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function alive(pid) {
  try {
    process.kill(pid, 0)
  } catch (e) {
    return e.code === "EPERM"
  }
  try {
    // A zombie (exited, not yet reaped by its parent) counts as gone.
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z"
  } catch {
    return process.platform !== "linux"
  }
}

/** Signals the process group (components run detached, one group each), falling back to the pid. */
function signal(pid, sig) {
  try {
    process.kill(-pid, sig)
  } catch {
    try {
      process.kill(pid, sig)
    } catch {}
  }
}

/** True when pid is one of our component processes (guards against pid reuse). */
function isOurs(pid, bin) {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]
    return cmd === bin
  } catch {
    return process.platform !== "linux" && alive(pid)
  }
}

/** Pids of processes running a binary from the build cache with an argument inside stateDir. */
function strays(stateDir) {
  if (process.platform !== "linux") return []
  const root = cacheRoot()
  const out = []
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
    let argv
    try {
      argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0")
    } catch {
      continue
    }
    if (!argv[0]?.startsWith(`${root}/`) || !alive(Number(d))) continue
    if (argv.some((a) => ownPath(a, stateDir)) || startedFor(Number(d), stateDir)) out.push(Number(d))
  }
  return out
}

/** What a cluster keeps in its state dir; another cluster's state dir may sit below it (`.nodemend/<name>`). */
const STATE_SUBDIRS = ["config", "etcd-data", "kubeconfig", "logs", "node", "pids", "pki", "prometheus"]

/** Whether an argument names a path of this state dir's own cluster, not of one in a directory below it. */
function ownPath(arg, stateDir) {
  const at = arg.indexOf(`${stateDir}/`)
  if (at < 0) return false
  const first = arg.slice(at + stateDir.length + 1).split("/")[0] ?? ""
  return STATE_SUBDIRS.some((d) => first === d || first.startsWith(`${d}=`))
}

/** Marks a process started for a state dir without it on its command line (Karpenter takes env only). */
const STATE_DIR_ENV = "NODEMEND_CLUSTER_STATE_DIR"

function startedFor(pid, stateDir) {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`${STATE_DIR_ENV}=${stateDir}`)
  } catch {
    return false
  }
}

/** GET an https URL with the cluster's admin identity. Resolves { status, body }. */
function httpsGet(url, pki, opts = {}) {
  return httpsCall("GET", url, pki, opts)
}

/** An https request with the cluster's admin identity; `body`/`contentType` for writes. Resolves { status, body }. */
function httpsCall(method, url, pki, { clientCert = true, insecure = false, body, contentType } = {}) {
  return new Promise((res, rej) => {
    const opts = { method, timeout: 5000, rejectUnauthorized: !insecure }
    if (body !== undefined)
      opts.headers = { "content-type": contentType, "content-length": Buffer.byteLength(body) }
    if (!insecure) opts.ca = readFileSync(join(pki, "ca.crt"))
    if (clientCert) {
      opts.cert = readFileSync(join(pki, "admin.crt"))
      opts.key = readFileSync(join(pki, "admin.key"))
    }
    const req = request(url, opts, (r) => {
      let body = ""
      r.on("data", (d) => {
        body += d
      })
      r.on("end", () => res({ status: r.statusCode, body }))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", rej)
    req.end(body)
  })
}

function httpGetStatus(url) {
  return new Promise((res, rej) => {
    const req = httpGet(url, { timeout: 2000 }, (r) => {
      let body = ""
      r.on("data", (d) => {
        body += d
      })
      r.on("end", () => res({ status: r.statusCode, body }))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", rej)
  })
}

function tail(file, lines = 30) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

async function waitFor(what, p, name, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  let last = ""
  const pidFile = join(p.pids, `${name}.pid`)
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : 0
  while (Date.now() < deadline) {
    if (pid && !alive(pid)) {
      throw new Error(
        `${name} exited while waiting for ${what}. Last log lines:\n${tail(join(p.logs, `${name}.log`))}`
      )
    }
    try {
      const r = await probe()
      if (r === true) return
      last = String(r)
    } catch (e) {
      last = e.message
    }
    await sleep(100)
  }
  throw new Error(
    `timed out waiting for ${what} (${last}). Last log lines of ${name}:\n${tail(join(p.logs, `${name}.log`))}`
  )
}

function startProcess(p, bin, name, args, env = {}) {
  const logFile = join(p.logs, `${name}.log`)
  const fd = openSync(logFile, "a")
  writeFileSync(fd, `\n# ${new Date().toISOString()} ${bin} ${args.join(" ")}\n`)
  const child = spawn(join(bin, name), args, {
    cwd: p.stateDir,
    detached: true, // own process group: `down` signals the whole group
    stdio: ["ignore", fd, fd],
    env: { ...process.env, KUBECONFIG: "", ...env }
  })
  closeSync(fd)
  child.unref()
  writeFileSync(join(p.pids, `${name}.pid`), String(child.pid))
  return child.pid
}

// ----------------------------------------------------------------------------------------------- up

/** The binary a component runs from: the control plane's bin dir, or Karpenter's cache (cluster.json `karpenter.dir`). */
function binaryOf(name, bin, karpenter) {
  if (name === "prometheus") return join(PROMETHEUS_BIN_DIR, "prometheus")
  return name === "karpenter"
    ? join(karpenterBinDir(karpenter ?? karpenterDir()), "karpenter")
    : join(bin, name)
}

function runningPids(p, bin, karpenter) {
  if (!existsSync(p.pids)) return []
  return readdirSync(p.pids)
    .filter((f) => f.endsWith(".pid"))
    .map((f) => ({ name: f.slice(0, -4), pid: Number(readFileSync(join(p.pids, f), "utf8")) }))
    .filter(
      ({ pid, name }) => pid > 0 && alive(pid) && (bin ? isOurs(pid, binaryOf(name, bin, karpenter)) : true)
    )
}

/**
 * Number of processes a healthy cluster runs: the five control-plane components, plus Karpenter and Prometheus
 * when they run.
 */
const expectedProcesses = (info) => 5 + (info?.karpenter ? 1 : 0) + (info?.prometheus ? 1 : 0)

// ----------------------------------------------------------------------------------------- karpenter

/** Whether `up` starts Karpenter by default (NODEMEND_KARPENTER=0 turns it off). */
const karpenterByDefault = () => process.env.NODEMEND_KARPENTER !== "0"

/** `<group>_<plural>.yaml` (controller-gen's file names) -> the CRD's name `<plural>.<group>`. */
const crdName = (file) => {
  const [group, plural] = file
    .split("/")
    .pop()
    .replace(/\.yaml$/, "")
    .split("_")
  return `${plural}.${group}`
}

/**
 * Applies Karpenter's CRDs (YAML, as shipped) and waits until they are Established, then creates the KWOKNodeClass
 * `default`. Runs before Karpenter starts: its readiness check needs NodePool and NodeClaim served.
 */
async function installKarpenterApis(p, server, dir) {
  const files = karpenterCrdFiles(dir)
  await Promise.all(
    files.map(async (f) => {
      const r = await httpsCall(
        "POST",
        `${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
        p.pki,
        {
          body: readFileSync(f, "utf8"),
          contentType: "application/yaml"
        }
      )
      if (r.status !== 201 && r.status !== 409)
        throw new Error(`creating CRD from ${f}: ${r.status} ${r.body}`)
    })
  )
  await Promise.all(
    files.map((f) =>
      waitFor(`CRD ${crdName(f)} Established`, p, "kube-apiserver", async () => {
        const r = await httpsGet(
          `${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName(f)}`,
          p.pki
        )
        if (r.status !== 200) return `${r.status}`
        const est = JSON.parse(r.body).status?.conditions?.find((c) => c.type === "Established")
        return est?.status === "True" || `Established=${est?.status}`
      })
    )
  )
  const nodeClass = {
    apiVersion: "karpenter.kwok.sh/v1alpha1",
    kind: "KWOKNodeClass",
    metadata: { name: KARPENTER_NODE_CLASS },
    spec: {}
  }
  await waitFor(`KWOKNodeClass ${KARPENTER_NODE_CLASS}`, p, "kube-apiserver", async () => {
    const r = await httpsCall("POST", `${server}/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses`, p.pki, {
      body: JSON.stringify(nodeClass),
      contentType: "application/json"
    })
    return r.status === 201 || r.status === 409 || `${r.status} ${r.body}`
  })
}

/**
 * Starts Karpenter's kwok provider out of cluster with the admin identity. Its metrics and health-probe servers
 * listen on every interface (":<port>"), so both ports are picked free on every interface.
 */
async function startKarpenter(p, server, dir) {
  const [metricsPort, healthProbePort] = await freePorts(2, undefined)
  const kubeconfig = join(p.config, "karpenter.kubeconfig")
  writeFileSync(kubeconfig, kubeconfigYaml(server, p.pki, "admin"), { mode: 0o600 })
  startProcess(p, karpenterBinDir(dir), "karpenter", [], {
    KUBECONFIG: kubeconfig,
    DISABLE_LEADER_ELECTION: "true",
    FEATURE_GATES: KARPENTER_FEATURE_GATES,
    METRICS_PORT: String(metricsPort),
    HEALTH_PROBE_PORT: String(healthProbePort),
    [STATE_DIR_ENV]: p.stateDir
  })
  return { metricsPort, healthProbePort }
}

export async function up({
  stateDir = defaultStateDir(),
  noBuild = false,
  realNode = process.env.NODEMEND_REAL_NODE === "1",
  karpenter: withKarpenter = karpenterByDefault(),
  prometheus: withPrometheus = process.env.NODEMEND_PROMETHEUS === "1"
} = {}) {
  const t0 = Date.now()
  const p = paths(stateDir)
  const bin = noBuild ? binDir() : await build()
  if (noBuild && !isCached(bin)) throw new Error(`binaries not built (${bin}); run npm run cluster:build`)
  const nodeBin = realNode ? await buildNode() : null
  // "unused" (the demo): Karpenter is neither built nor started, and a running cluster is reused whether it runs
  // Karpenter or not.
  const karpenterUnused = withKarpenter === "unused"
  let karpenterHome = null
  if (withKarpenter === true) {
    if (!noBuild) karpenterHome = await buildKarpenter()
    else if (isKarpenterCached()) karpenterHome = karpenterDir()
    else
      log(`Karpenter is not built (${karpenterDir()}); starting without it (npm run cluster:build builds it)`)
  }

  let prev = null
  try {
    prev = JSON.parse(readFileSync(p.info, "utf8"))
  } catch {}
  // Check pids against the binaries that started them (an older cache key's, possibly).
  const running = runningPids(p, prev?.binDir ?? bin, prev?.karpenter?.dir)
  if (
    running.length === expectedProcesses(prev) &&
    prev?.server &&
    prev.binDir === bin &&
    (karpenterUnused || (prev.karpenter?.dir ?? null) === karpenterHome) &&
    Boolean(prev.realNode) === realNode &&
    Boolean(prev.prometheus) === withPrometheus &&
    existsSync(p.kubeconfig)
  ) {
    const r = await httpsGet(`${prev.server}/readyz`, p.pki).catch((e) => ({ status: 0, body: e.message }))
    if (r.status === 200) {
      log(`already running (${prev.server}); kubeconfig: ${p.kubeconfig}`)
      return { ...prev, kubeconfig: p.kubeconfig, reused: true }
    }
  }
  if (running.length > 0) {
    log(
      prev?.binDir && prev.binDir !== bin
        ? "a cluster from other binaries is running; restarting it"
        : "found an unhealthy or partial cluster; restarting it"
    )
    await down({ stateDir })
  }

  for (const d of [p.pki, p.config, p.etcdData, p.pids, p.prometheus])
    rmSync(d, { recursive: true, force: true })
  for (const f of [p.kubeconfig, p.info]) rmSync(f, { force: true })
  for (const d of [p.config, p.logs, p.pids]) mkdirSync(d, { recursive: true })
  mkdirSync(p.etcdData, { recursive: true, mode: 0o700 })
  for (const c of STOP_ORDER) rmSync(join(p.logs, `${c}.log`), { force: true })

  if (realNode) {
    // A real node this state dir left running (a killed `up` or test run) is cleaned up first.
    await stopRealNode(stateDir, prev?.nodeBinDir ?? nodeBin, { quiet: true })
    preflight()
  }
  generatePki(p.pki, realNode ? [`IP:${NODE_IP}`] : [])
  // Recorded before anything starts so `down` knows which binaries' pids to stop even if `up` dies midway.
  writeFileSync(
    p.info,
    `${JSON.stringify({ binDir: bin, nodeBinDir: nodeBin ?? undefined, realNode, ...(karpenterHome ? { karpenter: { dir: karpenterHome } } : {}), starting: true }, null, 2)}\n`
  )
  if (realNode) {
    recordHostState(stateDir)
    createBridge()
  }
  const [etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort] = await freePorts(6)
  // With a real node the API server listens on the node's bridge address: pods reach it through the
  // `kubernetes` Service (kube-proxy), and that Service's endpoint may not be a loopback address.
  const apiHost = realNode ? NODE_IP : "127.0.0.1"
  const server = `https://${apiHost}:${apiPort}`
  for (const user of ["kube-controller-manager", "kube-scheduler", "kwok"]) {
    writeFileSync(join(p.config, `${user}.kubeconfig`), kubeconfigYaml(server, p.pki, user), { mode: 0o600 })
  }
  const phases = { pki: (Date.now() - t0) / 1000 }
  let realNodeInfo = null
  let karpenterInfo = null
  let prometheusInfo = null
  const pki = (f) => join(p.pki, f)
  const cfg = (f) => join(p.config, f)

  try {
    startProcess(p, bin, "etcd", [
      "--name=nodemend",
      `--data-dir=${p.etcdData}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=nodemend=http://127.0.0.1:${etcdPeer}`,
      "--auto-compaction-retention=1",
      "--quota-backend-bytes=8589934592",
      "--unsafe-no-fsync=true", // throwaway test data: skip fsync for speed
      "--log-level=warn"
    ])
    await waitFor("etcd /health", p, "etcd", async () => {
      const r = await httpGetStatus(`http://127.0.0.1:${etcdClient}/health`)
      return r.status === 200 || `${r.status} ${r.body}`
    })
    phases.etcd = (Date.now() - t0) / 1000

    startProcess(p, bin, "kube-apiserver", [
      `--bind-address=${apiHost}`,
      `--advertise-address=${apiHost}`,
      `--secure-port=${apiPort}`,
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      `--tls-cert-file=${pki("apiserver.crt")}`,
      `--tls-private-key-file=${pki("apiserver.key")}`,
      `--client-ca-file=${pki("ca.crt")}`,
      `--kubelet-client-certificate=${pki("apiserver-kubelet-client.crt")}`,
      `--kubelet-client-key=${pki("apiserver-kubelet-client.key")}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki("sa.pub")}`,
      `--service-account-signing-key-file=${pki("sa.key")}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      "--authorization-mode=Node,RBAC",
      // Defaults already include ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, MutatingAdmissionWebhook,
      // NamespaceLifecycle, ServiceAccount, ResourceQuota, Priority, ...; listed here to make the intent explicit.
      "--enable-admission-plugins=NodeRestriction,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,MutatingAdmissionWebhook",
      `--requestheader-client-ca-file=${pki("front-proxy-ca.crt")}`,
      "--requestheader-allowed-names=front-proxy-client",
      "--requestheader-username-headers=X-Remote-User",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      `--proxy-client-cert-file=${pki("front-proxy-client.crt")}`,
      `--proxy-client-key-file=${pki("front-proxy-client.key")}`,
      "--allow-privileged=true",
      ...(realNode
        ? [
            // logs/exec/proxy to the kubelet by its InternalIP (no DNS lookup of the node name), TLS checked.
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            `--kubelet-certificate-authority=${pki("ca.crt")}`
          ]
        : // Endpoints may not point at loopback; without a real node nothing needs the kubernetes Service endpoints.
          ["--endpoint-reconciler-type=none"]),
      "--profiling=false"
    ])
    await waitFor("kube-apiserver /readyz", p, "kube-apiserver", async () => {
      const r = await httpsGet(`${server}/readyz`, p.pki)
      return (
        r.status === 200 ||
        `${r.status} ${r.body
          .split("\n")
          .filter((l) => l.includes("[-]"))
          .join(" ")}`
      )
    })
    phases.apiserver = (Date.now() - t0) / 1000

    const authn = (kc) => [
      `--kubeconfig=${kc}`,
      `--authentication-kubeconfig=${kc}`,
      `--authorization-kubeconfig=${kc}`,
      "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
      "--leader-elect=false",
      "--bind-address=127.0.0.1"
    ]
    startProcess(p, bin, "kube-controller-manager", [
      ...authn(cfg("kube-controller-manager.kubeconfig")),
      `--secure-port=${kcmPort}`,
      `--cert-dir=${join(p.config, "kcm-serving")}`,
      // Every default controller, which includes node-lifecycle-controller, disruption-controller (PDB status),
      // pod-garbage-collector-controller, garbage-collector-controller, serviceaccount(-token), namespace, ...
      "--controllers=*",
      "--use-service-account-credentials=true",
      `--root-ca-file=${pki("ca.crt")}`,
      `--service-account-private-key-file=${pki("sa.key")}`,
      `--cluster-signing-cert-file=${pki("ca.crt")}`,
      `--cluster-signing-key-file=${pki("ca.key")}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      // Faster than the defaults (5 s / 50 s / 1 m) so tests that stop heartbeats see Ready=Unknown quickly.
      "--node-monitor-period=2s",
      "--node-monitor-grace-period=20s",
      "--node-startup-grace-period=30s"
    ])
    startProcess(p, bin, "kube-scheduler", [
      ...authn(cfg("kube-scheduler.kubeconfig")),
      `--secure-port=${schedPort}`,
      `--cert-dir=${join(p.config, "scheduler-serving")}`
    ])
    startProcess(p, bin, "kwok", [
      `--kubeconfig=${cfg("kwok.kubeconfig")}`,
      `--config=${join(TOOLS_DIR, "kwok", "stages.yaml")}`,
      "--manage-all-nodes=false",
      `--manage-nodes-with-label-selector=${FAKE_NODE_LABEL}=${FAKE_NODE_VALUE}`,
      "--node-ip=127.0.0.1",
      `--node-port=${kwokPort}`,
      `--server-address=127.0.0.1:${kwokPort}`,
      "--node-lease-duration-seconds=40"
    ])
    const insecure = { insecure: true, clientCert: false }
    const mark = (k) => () => {
      phases[k] = (Date.now() - t0) / 1000
    }
    // Karpenter: its CRDs and the KWOKNodeClass, then the process, then its readiness (caches synced, CRDs served),
    // all alongside the other components' health checks.
    const karpenterUp = karpenterHome
      ? installKarpenterApis(p, server, karpenterHome)
          .then(() => startKarpenter(p, server, karpenterHome))
          .then(async (ports) => {
            karpenterInfo = {
              dir: karpenterHome,
              version: KARPENTER.version,
              featureGates: KARPENTER_FEATURE_GATES,
              nodeClass: KARPENTER_NODE_CLASS,
              ports
            }
            await waitFor("karpenter /readyz", p, "karpenter", async () => {
              const r = await httpGetStatus(`http://127.0.0.1:${ports.healthProbePort}/readyz`)
              return r.status === 200 || `${r.status} ${r.body}`
            })
          })
          .then(mark("karpenter"))
      : Promise.resolve()
    // Prometheus: its config, rules and (empty) target files from deploy/monitoring, then the process.
    const prometheusUp = withPrometheus
      ? freePorts(1)
          .then(([port]) => {
            mkdirSync(join(p.prometheus, "targets"), { recursive: true })
            const prepared = preparePrometheus(p.prometheus, port)
            startProcess(p, PROMETHEUS_BIN_DIR, "prometheus", prepared.args)
            prometheusInfo = { url: `http://127.0.0.1:${port}`, targetsDir: prepared.targetsDir }
            return waitFor("prometheus /-/ready", p, "prometheus", async () => {
              const r = await httpGetStatus(`${prometheusInfo.url}/-/ready`)
              return r.status === 200 || `${r.status} ${r.body}`
            })
          })
          .then(mark("prometheus"))
      : Promise.resolve()
    await Promise.all([
      karpenterUp,
      prometheusUp,
      waitFor("kube-controller-manager /healthz", p, "kube-controller-manager", async () => {
        const r = await httpsGet(`https://127.0.0.1:${kcmPort}/healthz`, p.pki, insecure)
        return r.status === 200 || `${r.status} ${r.body}`
      }).then(mark("kcm")),
      waitFor("kube-scheduler /healthz", p, "kube-scheduler", async () => {
        const r = await httpsGet(`https://127.0.0.1:${schedPort}/healthz`, p.pki, insecure)
        return r.status === 200 || `${r.status} ${r.body}`
      }).then(mark("scheduler")),
      waitFor("kwok /healthz", p, "kwok", async () => {
        const r = await httpGetStatus(`http://127.0.0.1:${kwokPort}/healthz`)
        return r.status === 200 || `${r.status} ${r.body}`
      }).then(mark("kwok")),
      // Pods cannot be created before the serviceaccount controller made the namespace's default SA.
      waitFor("default ServiceAccount", p, "kube-controller-manager", async () => {
        const r = await httpsGet(`${server}/api/v1/namespaces/default/serviceaccounts/default`, p.pki)
        return r.status === 200 || `${r.status}`
      }).then(mark("defaultServiceAccount"))
    ])
    if (realNode) {
      const node = await startRealNode({
        stateDir,
        server,
        pki: p.pki,
        issue,
        kubeconfigYaml,
        bin: nodeBin
      })
      phases.realNode = (Date.now() - t0) / 1000
      realNodeInfo = { name: node.nodeName, ip: node.nodeIP, phases: node.phases }
      realNodeInfo.images = importBuiltImages(stateDir)
    }
  } catch (e) {
    log(`startup failed; stopping what was started. Logs: ${p.logs}`)
    await down({ stateDir, quiet: true })
    throw e
  }

  phases.all = (Date.now() - t0) / 1000
  const info = {
    server,
    realNode,
    nodeBinDir: nodeBin ?? undefined,
    ...(realNodeInfo ? { node: realNodeInfo } : {}),
    phases,
    versions: VERSIONS,
    binDir: bin,
    ports: { etcdClient, etcdPeer, apiserver: apiPort, kcm: kcmPort, scheduler: schedPort, kwok: kwokPort },
    ...(karpenterInfo ? { karpenter: karpenterInfo } : {}),
    ...(prometheusInfo ? { prometheus: prometheusInfo } : {}),
    fakeNodeLabel: `${FAKE_NODE_LABEL}=${FAKE_NODE_VALUE}`,
    startedAt: new Date().toISOString(),
    startupSeconds: (Date.now() - t0) / 1000
  }
  writeFileSync(p.info, `${JSON.stringify(info, null, 2)}\n`)
  writeFileSync(p.kubeconfig, kubeconfigYaml(server, p.pki, "admin"), { mode: 0o600 })
  log(`up in ${info.startupSeconds.toFixed(1)} s: ${server} (${JSON.stringify(phases)})`)
  log(`kubeconfig: ${p.kubeconfig}   logs: ${p.logs}`)
  return { ...info, kubeconfig: p.kubeconfig, reused: false }
}

// --------------------------------------------------------------------------------------------- down

export async function down({ stateDir = defaultStateDir(), purge = false, quiet = false } = {}) {
  const p = paths(stateDir)
  let bin = null
  let nodeBin = null
  let karpenter = null
  try {
    const info = JSON.parse(readFileSync(p.info, "utf8"))
    bin = info.binDir
    nodeBin = info.nodeBinDir ?? null
    karpenter = info.karpenter?.dir ?? null
  } catch {
    bin = binDir()
  }
  const stopped = []
  {
    const entries = (existsSync(p.pids) ? readdirSync(p.pids) : [])
      .filter((f) => f.endsWith(".pid"))
      .map((f) => ({ name: f.slice(0, -4), pid: Number(readFileSync(join(p.pids, f), "utf8")) }))
      .sort((a, b) => STOP_ORDER.indexOf(a.name) - STOP_ORDER.indexOf(b.name))
    const stopOne = async ({ name, pid, stray = false }) => {
      if (!(pid > 0) || !alive(pid)) return
      if (!stray && !isOurs(pid, binaryOf(name, bin, karpenter))) {
        if (!quiet) log(`pid ${pid} (${name}) is no longer our process; leaving it alone`)
        return
      }
      signal(pid, "SIGTERM")
      const t0 = Date.now()
      while (alive(pid) && Date.now() < t0 + 10_000) await sleep(50)
      if (alive(pid)) {
        if (!quiet) log(`${name} (pid ${pid}) ignored SIGTERM for 10 s; sending SIGKILL`)
        signal(pid, "SIGKILL")
        while (alive(pid) && Date.now() < t0 + 15_000) await sleep(50)
      }
      stopped.push(`${name}(${pid})`)
    }
    // Safety net for lost pid files: our cached binaries running with arguments inside this state dir.
    // The real node's kubelet and kube-proxy are API clients too: stopped (by their own pid files) first.
    stopped.push(...(await stopNodeClients(stateDir)))
    const known = new Set(entries.map((e) => e.pid))
    for (const pid of strays(stateDir).filter((x) => !known.has(x))) {
      if (!quiet) log(`also stopping pid ${pid}: not in pids/, but runs a cached binary on ${stateDir}`)
      const name = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]?.split("/").pop() ?? "?"
      entries.push({ name, pid, stray: true })
    }
    // Clients of the API server first (together), then the API server, then etcd.
    const clientsOfApi = entries.filter((e) => !["kube-apiserver", "etcd"].includes(e.name))
    await Promise.all(clientsOfApi.map(stopOne))
    for (const e of entries.filter((x) => ["kube-apiserver", "etcd"].includes(x.name))) await stopOne(e)
  }
  // The rest of the real node after the control plane: the API server listens on the node's bridge address,
  // and with that address gone (or kubelet's watches still open) its graceful shutdown hangs until SIGKILL
  // (10 s). Nothing of the node's teardown needs the API server.
  await stopRealNode(stateDir, nodeBin, { quiet })
  for (const d of [p.pids, p.pki, p.config, p.etcdData, p.prometheus])
    rmSync(d, { recursive: true, force: true })
  for (const f of [p.kubeconfig, p.info]) rmSync(f, { force: true })
  if (purge) rmSync(p.logs, { recursive: true, force: true })
  if (!quiet) log(stopped.length ? `stopped ${stopped.join(" ")}` : "nothing was running")
  return stopped
}

export function status({ stateDir = defaultStateDir() } = {}) {
  const p = paths(stateDir)
  let info = null
  try {
    info = JSON.parse(readFileSync(p.info, "utf8"))
  } catch {}
  return { stateDir, info, running: runningPids(p, info?.binDir, info?.karpenter?.dir) }
}

/**
 * Imports the OCI archives `npm run images` wrote (.nodemend/images/images.json) into the real node's containerd
 * under their fully qualified names; returns the refs imported (none when no images were built).
 */
export function importBuiltImages(stateDir = defaultStateDir()) {
  const summaryFile = join(REPO_ROOT, ".nodemend", "images", "images.json")
  if (!existsSync(summaryFile)) return []
  const { images } = JSON.parse(readFileSync(summaryFile, "utf8"))
  for (const i of images) importImage(stateDir, i.archive, i.ref)
  if (images.length) log(`imported ${images.map((i) => i.ref).join(", ")} into the real node`)
  return images.map((i) => i.ref)
}

// ---------------------------------------------------------------------------------------------- CLI

function parseArgs(argv) {
  const opts = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === "--state-dir") opts.stateDir = resolve(argv[++i])
    else if (a.startsWith("--state-dir=")) opts.stateDir = resolve(a.slice(12))
    else if (a === "--no-build") opts.noBuild = true
    else if (a === "--purge") opts.purge = true
    else if (a === "--real-node") opts.realNode = true
    else if (a === "--no-karpenter") opts.karpenter = false
    else if (a === "--prometheus") opts.prometheus = true
    else throw new Error(`unknown argument ${a}`)
  }
  return opts
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [cmd, ...rest] = process.argv.slice(2)
  const main = async () => {
    const opts = parseArgs(rest)
    if (cmd === "up") {
      const r = await up(opts)
      process.stdout.write(`${r.kubeconfig}\n`)
    } else if (cmd === "down") {
      await down(opts)
    } else if (cmd === "load-images") {
      process.stdout.write(`${importBuiltImages(opts.stateDir).join("\n")}\n`)
    } else if (cmd === "status") {
      const s = status(opts)
      process.stdout.write(`${JSON.stringify(s, null, 2)}\n`)
      process.exit(s.running.length === expectedProcesses(s.info) ? 0 : 1)
    } else {
      throw new Error(
        "usage: cluster.mjs up|down|status|load-images [--state-dir DIR] [--no-build] [--real-node] [--no-karpenter] [--prometheus] [--purge]"
      )
    }
  }
  main().catch((e) => {
    log(String(e?.message ?? e))
    process.exit(1)
  })
}
