#!/usr/bin/env node
// `npm run kind:up` / `kind:down`: nodemend on a kind cluster (deploy/kind/kind-config.yaml: a control plane and
// two workers in two zones), kwok in the cluster for fake nodes, the images `npm run images` builds loaded and the
// Helm chart installed (kwok provider). With a Docker daemon: Docker and the published kindest/node image. Without:
// podman (podman.mjs) and the node image assembled locally (node-image.mjs), with a CNI of ours (cni.mjs), and
// `down` restores what the cluster changed on the host (host.mjs) and prints what it could not.
//
//   node tools/kind/kind.mjs up   [--state-dir DIR] [--no-chart]
//   node tools/kind/kind.mjs down [--state-dir DIR]
//
// State (default <repo>/.nodemend/kind): kubeconfig, kind-config.yaml, kind.json (provider, image, phase times),
// host-state.json (podman only), kind-down.json (what the last down left).
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parse, stringify } from "yaml"
import { fmt } from "../cluster/build.mjs"
import { BRIDGE } from "../cluster/realnode.mjs"
import { REPO_ROOT, TOOLS_DIR, VERSIONS, binDir } from "../cluster/versions.mjs"
import { build as buildHelm } from "../helm/build.mjs"
import { IMAGES_DIR, buildImages } from "../images/build.mjs"
import { ensurePrereqs } from "../prereqs.mjs"
import { build } from "./build.mjs"
import { configureNetwork } from "./cni.mjs"
import { ensureLibModules, readHostState, recordHostState, restoreHost } from "./host.mjs"
import { kwokImage, kwokManifests } from "./kwok.mjs"
import { PODMAN_CNI_CONFLIST, dockerRuns, podmanEnv } from "./podman.mjs"
import { CLUSTER_NAME, PUBLISHED_NODE_IMAGE, kindBinDir, podmanDir } from "./versions.mjs"

const log = (msg) => process.stderr.write(`[kind] ${msg}\n`)
const CONTROL_PLANE = `${CLUSTER_NAME}-control-plane`
const CHART_IMAGES = ["agent", "controller"]

export const defaultStateDir = () => join(REPO_ROOT, ".nodemend", "kind")
const paths = (stateDir) => ({
  kubeconfig: join(stateDir, "kubeconfig"),
  config: join(stateDir, "kind-config.yaml"),
  info: join(stateDir, "kind.json"),
  hostState: join(stateDir, "host-state.json"),
  downReport: join(stateDir, "kind-down.json")
})

/** The kind config: deploy/kind/kind-config.yaml, plus what this machine needs (pure). */
export function kindConfig(base, { cgroupV1, ownCni }) {
  const cfg = structuredClone(base)
  // kubelet 1.35+ refuses cgroup v1 unless told otherwise (KEP-5573); these machines are cgroup v1 hybrid.
  if (cgroupV1)
    cfg.kubeadmConfigPatches = [
      ...(cfg.kubeadmConfigPatches ?? []),
      "kind: KubeletConfiguration\nfailCgroupV1: false\n"
    ]
  // The locally assembled image has no kindnetd: cni.mjs configures the pod network after the nodes join.
  if (ownCni) cfg.networking = { ...(cfg.networking ?? {}), disableDefaultCNI: true }
  return cfg
}

const sh = (p, cmd, args, opts = {}) =>
  execFileSync(cmd, args, {
    env: p.env,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "inherit"],
    maxBuffer: 1 << 26,
    ...opts
  })

/** How to run kind and the container engine on this machine: `run` returns a command's stdout. */
function provider() {
  const docker = dockerRuns()
  const p = {
    name: docker ? "docker" : "podman",
    env: docker ? { ...process.env } : podmanEnv(),
    engine: docker ? "docker" : "podman"
  }
  p.run = (cmd, args, input) => sh(p, cmd, args, input === undefined ? {} : { input })
  return p
}

/** Runs a command in a kind node container (its root filesystem, network and journal): returns its stdout. */
const exec = (p, node, args, input) => p.run(p.engine, ["exec", "-i", node, ...args], input)
export const nodeExec = (node, args, input) => exec(provider(), node, args, input)
/** kubectl in the control-plane node, as cluster-admin (the host needs no kubectl). */
export const kubectl = (p, args, input) =>
  exec(p, CONTROL_PLANE, ["kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", ...args], input)
const clusterExists = (p, bin) =>
  sh(p, join(bin, "kind"), ["get", "clusters"]).split("\n").includes(CLUSTER_NAME)

function preflight() {
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    throw new Error("kind:up needs root on Linux (privileged node containers)")
}

export async function up({ stateDir = defaultStateDir(), chart = true, images = chart } = {}) {
  preflight()
  // Before any podman command: podman creates /etc/cni/net.d/cni.lock on its first run.
  const etcCni = existsSync("/etc/cni")
  const t0 = Date.now()
  const phases = {}
  const mark = (k) => {
    phases[k] = Math.round((Date.now() - t0) / 1000)
    log(`${k}: ${fmt(Date.now() - t0)}`)
  }
  const p = provider()
  const docker = p.name === "docker"
  ensurePrereqs(docker ? ["kindDocker"] : ["kindPodman"], { entry: "kind:up", throwOnMissing: true })
  // Debian's podman package installs it; netavark does not need it and a real node's containerd must not read it.
  rmSync(PODMAN_CNI_CONFLIST, { force: true })
  const { bin, image: localImage } = await build({ docker })
  const image = localImage ?? PUBLISHED_NODE_IMAGE
  mark("build")
  const s = paths(stateDir)
  mkdirSync(stateDir, { recursive: true })
  const fresh = !clusterExists(p, bin)
  if (fresh) {
    if (!docker) {
      // Both record and restore the host's sysctls: one running while the other comes and goes would undo its settings.
      if (existsSync(`/sys/class/net/${BRIDGE}`))
        throw new Error(
          `a real node runs on this machine (bridge ${BRIDGE}): stop it (cluster:down) before kind:up`
        )
      if (readHostState(s.hostState))
        throw new Error(`${s.hostState} exists: a cluster's down did not finish; run kind:down first`)
      recordHostState(s.hostState, { etcCni })
      ensureLibModules()
    }
    const cfg = kindConfig(parse(readFileSync(join(REPO_ROOT, "deploy/kind/kind-config.yaml"), "utf8")), {
      cgroupV1: !existsSync("/sys/fs/cgroup/cgroup.controllers"),
      ownCni: !docker
    })
    writeFileSync(s.config, stringify(cfg, { blockQuote: "literal" }))
    const wait = docker ? ["--wait", "180s"] : []
    sh(
      p,
      join(bin, "kind"),
      [
        "create",
        "cluster",
        "--name",
        CLUSTER_NAME,
        "--config",
        s.config,
        "--image",
        image,
        "--kubeconfig",
        s.kubeconfig,
        ...wait
      ],
      { stdio: ["ignore", "inherit", "inherit"] }
    )
    mark("kind create cluster")
  }
  writeFileSync(s.kubeconfig, sh(p, join(bin, "kind"), ["get", "kubeconfig", "--name", CLUSTER_NAME]), {
    mode: 0o600
  })
  if (!docker) await configureNetwork(p, kubectl)
  kubectl(p, ["wait", "--for=condition=Ready", "node", "--all", "--timeout=180s"])
  mark("nodes Ready")
  const load = (archive) =>
    sh(p, join(bin, "kind"), ["load", "image-archive", archive, "--name", CLUSTER_NAME], {
      stdio: ["ignore", "ignore", "inherit"]
    })
  load(await kwokImage(join(binDir(), "kwok")))
  kwokManifests(p, kubectl, CONTROL_PLANE, join(TOOLS_DIR, "kwok", "stages.yaml"))
  mark("kwok")
  if (images || chart) {
    const missing = CHART_IMAGES.filter((n) => !existsSync(join(IMAGES_DIR, `${n}.tar`)))
    if (missing.length) await buildImages({ names: missing })
    for (const n of CHART_IMAGES) load(join(IMAGES_DIR, `${n}.tar`))
    mark("images loaded")
  }
  if (chart) {
    const helm = await buildHelm()
    execFileSync(
      helm,
      [
        "upgrade",
        "--install",
        "nodemend",
        join(REPO_ROOT, "deploy/helm/nodemend"),
        "-n",
        "nodemend-system",
        "--create-namespace",
        "--set",
        "controller.cloudProvider=kwok",
        "--kubeconfig",
        s.kubeconfig,
        "--wait",
        "--timeout",
        "5m"
      ],
      { stdio: ["ignore", "ignore", "inherit"] }
    )
    mark("chart")
  }
  const info = {
    provider: p.name,
    image,
    kubernetes: VERSIONS.kubernetes,
    kubeconfig: s.kubeconfig,
    fresh,
    seconds: phases
  }
  writeFileSync(s.info, `${JSON.stringify(info, null, 2)}\n`)
  log(
    `kind cluster ${CLUSTER_NAME} up (${p.name}, ${image}) in ${fmt(Date.now() - t0)}; kubeconfig: ${s.kubeconfig}`
  )
  return info
}

export async function down({ stateDir = defaultStateDir() } = {}) {
  preflight()
  const s = paths(stateDir)
  const p = provider()
  // kind from the cache (down builds nothing); the node containers by kind's label in any case.
  const kind = join(kindBinDir(), "kind")
  if (existsSync(kind))
    sh(p, kind, ["delete", "cluster", "--name", CLUSTER_NAME], { stdio: ["ignore", "inherit", "inherit"] })
  const nodes = p
    .run(p.engine, ["ps", "-aq", "--filter", `label=io.x-k8s.kind.cluster=${CLUSTER_NAME}`])
    .split("\n")
    .filter(Boolean)
  if (nodes.length) p.run(p.engine, ["rm", "--force", "--volumes", ...nodes])
  let left = []
  const state = readHostState(s.hostState)
  if (p.name === "podman") {
    try {
      sh(p, "podman", ["network", "rm", "--force", "kind"], { stdio: "ignore" })
    } catch {}
    if (state) left = restoreHost(state, [podmanDir()])
    else log(`no ${s.hostState}: nothing recorded to restore`)
  }
  rmSync(s.kubeconfig, { force: true })
  if (left.length) log(`left over after kind:down: ${left.join("; ")}`)
  else log("kind:down: the host is as recorded before kind:up")
  writeFileSync(s.downReport, `${JSON.stringify({ at: new Date().toISOString(), left }, null, 2)}\n`)
  rmSync(s.hostState, { force: true })
  return left
}

function parseArgs(argv) {
  const [cmd, ...rest] = argv
  const opts = {}
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--state-dir") opts.stateDir = resolve(rest[++i])
    else if (rest[i] === "--no-chart") opts.chart = false
    else
      throw new Error(`unknown argument ${rest[i]} (usage: kind.mjs up|down [--state-dir DIR] [--no-chart])`)
  }
  return { cmd, opts }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { cmd, opts } = parseArgs(process.argv.slice(2))
  const action = { up, down }[cmd]
  if (!action) {
    log("usage: kind.mjs up|down [--state-dir DIR] [--no-chart]")
    process.exit(2)
  }
  action(opts).then(
    (r) => process.exit(cmd === "down" && r.length ? 1 : 0),
    (e) => {
      log(String(e?.stack ?? e))
      process.exit(1)
    }
  )
}
