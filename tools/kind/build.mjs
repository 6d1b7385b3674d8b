#!/usr/bin/env node
// Builds what a kind cluster needs into ~/.cache/nodemend/kind-<key>/bin, from the Go module proxy and the
// pins in versions.mjs: kind, crictl, coredns, kubeadm and kubectl (tools/kind/node, the control plane's Go build
// cache). Then, where no Docker daemon runs, the node image (node-image.mjs) from those, the control plane's
// binaries (tools/cluster/build.mjs) and the real node's kubelet, kube-proxy and pause (tools/cluster/realnode.mjs),
// reusing their caches. A no-op when everything for the current key is there.
//
//   node tools/kind/build.mjs            build (or verify the cache)
//   node tools/kind/build.mjs --check    exit 0 when the node image is cached, 1 otherwise
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { acquireLock, cacheCommand, fmt, goArgs, goEnv, k8sBuildArgs, run } from "../cluster/build.mjs"
import { buildNodeImage } from "./node-image.mjs"
import { KIND_DIR, KIND_VERSIONS, imageStamp, kindBinDir } from "./versions.mjs"

export const TOOLS = ["kind", "crictl", "coredns", "kubeadm", "kubectl"]
export const log = (msg) => process.stderr.write(`[kind:build] ${msg}\n`)

export const toolsBuilt = (dir = kindBinDir()) => TOOLS.every((t) => existsSync(join(dir, t)))

const GO_INSTALLS = {
  kind: `sigs.k8s.io/kind@${KIND_VERSIONS.kind}`,
  crictl: `sigs.k8s.io/cri-tools/cmd/crictl@${KIND_VERSIONS.crictl}`,
  coredns: `github.com/coredns/coredns@${KIND_VERSIONS.coredns}`
}

/** The Go steps: `go install` of the three pinned modules, one `go build` of kubeadm and kubectl. */
function steps(tmp) {
  const installs = Object.entries(GO_INSTALLS).map(([name, mod]) => ({
    outputs: [name],
    cwd: KIND_DIR,
    env: { GOBIN: tmp },
    args: goArgs("install", [mod])
  }))
  const k8s = ["kubeadm", "kubectl"]
  return [...installs, { outputs: k8s, cwd: join(KIND_DIR, "node"), env: {}, args: k8sBuildArgs(tmp, k8s) }]
}

/** Builds the five binaries (what an earlier partial run left is kept). */
export async function buildTools() {
  const dir = kindBinDir()
  if (toolsBuilt(dir)) return dir
  const keyDir = dirname(dir)
  mkdirSync(keyDir, { recursive: true })
  const lockDir = `${keyDir}.lock`
  await acquireLock(lockDir, log)
  try {
    if (toolsBuilt(dir)) return dir
    const tmp = join(keyDir, "bin.partial")
    mkdirSync(tmp, { recursive: true })
    for (const s of steps(tmp)) {
      if (s.outputs.every((o) => existsSync(join(tmp, o)))) continue
      log(`building ${s.outputs.join(", ")} (progress every 20 s)...`)
      const ms = await run(
        s.outputs.join("+"),
        "go",
        s.args,
        { cwd: s.cwd, env: { ...goEnv(), ...s.env } },
        log
      )
      log(`${s.outputs.join(", ")} built in ${fmt(ms)}`)
    }
    renameSync(tmp, dir)
    pruneOtherKinds(keyDir)
    return dir
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}

/** Removes the other kind-v* cache keys (the podman directory, kind-podman, stays). */
function pruneOtherKinds(keyDir) {
  if (process.env.NODEMEND_CLUSTER_KEEP_OLD) return
  const root = dirname(keyDir)
  for (const d of readdirSync(root))
    if (d.startsWith("kind-v") && !d.endsWith(".lock") && join(root, d) !== keyDir) {
      rmSync(join(root, d), { recursive: true, force: true })
      log(`removed old cache ${join(root, d)}`)
    }
}

/** The tools, and (without Docker) the node image: returns { bin, image }. */
export async function build({ docker = false } = {}) {
  const bin = await buildTools()
  if (docker) return { bin, image: undefined }
  return { bin, image: await buildNodeImage(bin) }
}

cacheCommand(import.meta.url, {
  dir: kindBinDir,
  cached: () => toolsBuilt() && imageStamp() !== undefined,
  build: async () => (await build()).image ?? kindBinDir(),
  say: log
})
