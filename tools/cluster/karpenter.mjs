#!/usr/bin/env node
// Karpenter's kwok provider (sigs.k8s.io/karpenter, main package `kwok`) for the local cluster: built from the Go
// module proxy into ~/.cache/nodemend/cluster/karpenter-<version>-<hash>/ (bin/karpenter, and crds/ copied from the
// module source: kwok/charts/crds/*.yaml and kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml). cluster.mjs
// starts it out of cluster next to the control plane (see startKarpenter there).
//
//   node tools/cluster/karpenter.mjs            build (or verify the cache)
//   node tools/cluster/karpenter.mjs --print    print the cache directory, build nothing
//   node tools/cluster/karpenter.mjs --check    exit 0 if the cache is complete, 1 otherwise
//
// Kept apart from versions.mjs: VERSIONS there is hashed into the control plane's cache key, and a Karpenter
// bump must not rebuild Kubernetes.
import { createHash } from "node:crypto"
import { execFileSync } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { acquireLock, cacheCommand, fmt, goArgs, goEnv, pruneOtherKeys, run } from "./build.mjs"
import { STAMP_FILE, cacheRoot } from "./versions.mjs"

export const KARPENTER = {
  module: "sigs.k8s.io/karpenter",
  /** The newest v1.15.x the module proxy serves (checked 2026-12: v1.15.0 only). */
  version: "v1.15.0",
  /** The module's go.mod asks for go 1.26.9; the proxy serves that toolchain. */
  goToolchain: "go1.26.9"
}

/** CRD files copied from the module source (paths inside the module). */
const CRD_SOURCES = [
  "kwok/charts/crds/karpenter.sh_nodepools.yaml",
  "kwok/charts/crds/karpenter.sh_nodeclaims.yaml",
  "kwok/charts/crds/karpenter.sh_nodeoverlays.yaml",
  "kwok/charts/crds/autoscaling.x-k8s.io_capacitybuffers.yaml",
  "kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml"
]

/** Bump when the way the binary or the crds/ directory is produced changes. */
export const KARPENTER_RECIPE =
  "1: go install <module>/kwok@<version>, CGO_ENABLED=0 -trimpath -ldflags=-s -w; crds copied"

function log(msg) {
  process.stderr.write(`[karpenter:build] ${msg}\n`)
}

export function karpenterCacheKey() {
  const h = createHash("sha256")
  h.update(JSON.stringify(KARPENTER))
  h.update(KARPENTER_RECIPE)
  h.update(JSON.stringify(CRD_SOURCES))
  return `karpenter-${KARPENTER.version}-${h.digest("hex").slice(0, 12)}`
}

/** The cache directory: bin/karpenter, crds/*.yaml, .complete.json. NODEMEND_KARPENTER_DIR overrides it. */
export function karpenterDir() {
  if (process.env.NODEMEND_KARPENTER_DIR) return resolve(process.env.NODEMEND_KARPENTER_DIR)
  return join(cacheRoot(), karpenterCacheKey())
}

export const karpenterBinDir = (dir = karpenterDir()) => join(dir, "bin")
export const karpenterCrdsDir = (dir = karpenterDir()) => join(dir, "crds")

export function isKarpenterCached(dir = karpenterDir()) {
  const bin = join(karpenterBinDir(dir), "karpenter")
  if (!existsSync(bin) || statSync(bin).size === 0) return false
  if (!CRD_SOURCES.every((f) => existsSync(join(karpenterCrdsDir(dir), basename(f))))) return false
  if (process.env.NODEMEND_KARPENTER_DIR) return true
  try {
    return JSON.parse(readFileSync(join(dir, STAMP_FILE), "utf8")).key === karpenterCacheKey()
  } catch {
    return false
  }
}

/** The CRD files of the cache, in apply order. */
export function karpenterCrdFiles(dir = karpenterDir()) {
  return CRD_SOURCES.map((f) => join(karpenterCrdsDir(dir), basename(f)))
}

export async function buildKarpenter() {
  const dir = karpenterDir()
  if (isKarpenterCached(dir)) {
    log(`cache valid: ${dir}`)
    return dir
  }
  if (process.env.NODEMEND_KARPENTER_DIR) {
    throw new Error(
      `NODEMEND_KARPENTER_DIR=${dir} lacks bin/karpenter or crds/ (${CRD_SOURCES.map(basename).join(", ")})`
    )
  }
  mkdirSync(dirname(dir), { recursive: true })
  const lockDir = `${dir}.lock`
  await acquireLock(lockDir, log)
  const release = () => rmSync(lockDir, { recursive: true, force: true })
  process.on("exit", release)
  try {
    if (isKarpenterCached(dir)) {
      log(`cache valid (built by another process): ${dir}`)
      return dir
    }
    const partial = `${dir}.partial`
    rmSync(partial, { recursive: true, force: true })
    mkdirSync(join(partial, "bin"), { recursive: true })
    mkdirSync(join(partial, "crds"), { recursive: true })
    const env = { ...goEnv(), GOTOOLCHAIN: KARPENTER.goToolchain, GOBIN: join(partial, "bin") }
    const ref = `${KARPENTER.module}/kwok@${KARPENTER.version}`
    const t0 = Date.now()
    log(
      `building ${ref} with ${KARPENTER.goToolchain} into ${dir} (a cold build takes minutes; progress every 20 s)`
    )
    // `go install pkg@version` works: the module's go.mod has no replace directives. Run outside any module.
    await run("karpenter", "go", goArgs("install", [ref]), { cwd: partial, env }, log)
    // The binary is named after its package directory; call it what it is.
    renameSync(join(partial, "bin", "kwok"), join(partial, "bin", "karpenter"))
    const info = JSON.parse(
      execFileSync("go", ["mod", "download", "-json", `${KARPENTER.module}@${KARPENTER.version}`], {
        cwd: partial,
        env,
        encoding: "utf8"
      })
    )
    if (!info.Dir) throw new Error(`go mod download gave no module directory: ${JSON.stringify(info)}`)
    for (const f of CRD_SOURCES) copyFileSync(join(info.Dir, f), join(partial, "crds", basename(f)))
    const total = Date.now() - t0
    writeFileSync(
      join(partial, STAMP_FILE),
      `${JSON.stringify({ key: karpenterCacheKey(), karpenter: KARPENTER, builtAt: new Date().toISOString(), totalSeconds: Math.round(total / 1000) }, null, 2)}\n`
    )
    rmSync(dir, { recursive: true, force: true })
    renameSync(partial, dir)
    log(`done in ${fmt(total)}: ${dir}`)
    pruneOtherKeys(dir, "karpenter-", log)
    return dir
  } finally {
    release()
  }
}

cacheCommand(import.meta.url, {
  dir: () => karpenterDir(),
  cached: () => isKarpenterCached(),
  build: buildKarpenter,
  say: log
})
