// Pinned versions and cache layout for nodemend's local Kubernetes cluster.
// Imported by build.mjs and cluster.mjs; no dependencies beyond Node's standard library.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const TOOLS_DIR = dirname(fileURLToPath(import.meta.url))
export const REPO_ROOT = join(TOOLS_DIR, "..", "..")

/** The version go.mod requires of `module` (go.mod is where the pins live; it is in the cache key). */
function required(goMod, module) {
  const at = new RegExp(`^\\s*(?:require\\s+)?${module.replaceAll(".", "\\.")} (v\\S+)`, "m").exec(goMod)
  if (!at) throw new Error(`tools/cluster/go.mod requires no ${module}`)
  return at[1]
}

const GO_MOD = readFileSync(join(TOOLS_DIR, "go.mod"), "utf8")

/** Upstream releases, as go.mod pins them (the staging modules are replaced with the matching v0.x tags there). */
export const VERSIONS = {
  kubernetes: required(GO_MOD, "k8s.io/kubernetes"),
  etcd: required(GO_MOD, "go.etcd.io/etcd/server/v3"),
  kwok: required(GO_MOD, "sigs.k8s.io/kwok") // its cmd/kwok a `tool` of the module
}

export const COMPONENTS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok"]

/** Files whose content defines what gets built. */
const KEY_FILES = [
  "go.mod",
  "go.sum",
  "cmd/kube-apiserver/main.go",
  "cmd/kube-controller-manager/main.go",
  "cmd/kube-scheduler/main.go",
  "cmd/etcd/main.go",
  "versions.mjs"
]

/**
 * Identifies how build.mjs compiles (flags, CGO, version stamping). Bump it when build.mjs changes the
 * produced binaries; cosmetic edits to build.mjs then do not invalidate everyone's cache.
 */
export const BUILD_RECIPE =
  "3: one module, one go build; CGO_ENABLED=0 -trimpath -ldflags=-s -w, k8s version stamped via component-base/version"

export function cacheKey() {
  const h = createHash("sha256")
  h.update(JSON.stringify(VERSIONS))
  h.update(BUILD_RECIPE)
  for (const f of KEY_FILES) {
    h.update(`\0${f}\0`)
    h.update(readFileSync(join(TOOLS_DIR, f)))
  }
  return `k8s-${VERSIONS.kubernetes}-etcd-${VERSIONS.etcd}-kwok-${VERSIONS.kwok}-${h.digest("hex").slice(0, 12)}`
}

export function cacheRoot() {
  if (process.env.NODEMEND_CACHE_DIR) return join(process.env.NODEMEND_CACHE_DIR, "cluster")
  const xdg = process.env.XDG_CACHE_HOME || join(homedir(), ".cache")
  return join(xdg, "nodemend", "cluster")
}

export function binDir() {
  if (process.env.NODEMEND_CLUSTER_BIN_DIR) return process.env.NODEMEND_CLUSTER_BIN_DIR
  return join(cacheRoot(), cacheKey(), "bin")
}

export const STAMP_FILE = ".complete.json"
