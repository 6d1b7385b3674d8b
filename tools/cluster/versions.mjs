// Pinned versions and cache layout for nodemend's local Kubernetes cluster.
// Imported by build.mjs and cluster.mjs; no dependencies beyond Node's standard library.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const TOOLS_DIR = dirname(fileURLToPath(import.meta.url))
export const REPO_ROOT = join(TOOLS_DIR, "..", "..")

/** Upstream releases. Changing any of these (or the Go sources) changes the cache key. */
export const VERSIONS = {
  kubernetes: "v1.37.2", // k8s.io/kubernetes; staging modules pinned to v0.37.2 in go.mod
  etcd: "v3.7.3", // go.etcd.io/etcd/server/v3 in go.mod
  kwok: "v0.8.0" // sigs.k8s.io/kwok in go.mod (its cmd/kwok a `tool`)
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
