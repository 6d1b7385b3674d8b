// Pinned versions and cache layout for the kind cluster (tools/kind): kind itself, the node image's tools and the
// tags kubeadm expects. The Kubernetes, etcd and kwok pins are the local cluster's (tools/cluster/versions.mjs).
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { nodeBinDir } from "../cluster/realnode.mjs"
import { VERSIONS, binDir, cacheRoot } from "../cluster/versions.mjs"

export const KIND_DIR = dirname(fileURLToPath(import.meta.url))

export const KIND_VERSIONS = {
  kind: "v0.33.0", // sigs.k8s.io/kind
  crictl: "v1.36.0", // sigs.k8s.io/cri-tools (kind v0.33.0's base image pin); `kind export logs` runs it
  coredns: "v1.14.6", // github.com/coredns/coredns: kubeadm v1.37's CoreDNSVersion
  etcdImageTag: "3.7.0-0", // kubeadm v1.37's DefaultEtcdVersion; the project's etcd binary inside
  pauseTags: ["3.10", "3.10.2"], // kind's containerd sandbox_image, kubeadm's PauseVersion
  debian: "bookworm" // the node image's base (debootstrap)
}

/** The published node image kind uses where Docker runs (same Kubernetes version as the local cluster). */
export const PUBLISHED_NODE_IMAGE = `docker.io/kindest/node:${VERSIONS.kubernetes}`
export const CLUSTER_NAME = "nodemend"

/** Files whose content defines what gets built (with the control plane's and the real node's cache keys). */
const KEY_FILES = ["node/go.mod", "node/go.sum", "node/cmd/kubeadm/main.go", "node/cmd/kubectl/main.go"]

/** Bump when node-image.mjs changes what the image holds (cosmetic edits then keep everyone's cache). */
export const IMAGE_RECIPE =
  "2: debootstrap minbase (+jq) + kind base files, Debian containerd/runc/CNI plugins, preload unit, images from scratch"

export function kindKey() {
  const h = createHash("sha256")
  h.update(JSON.stringify({ VERSIONS, KIND_VERSIONS, IMAGE_RECIPE }))
  // The binaries the image holds come from these caches: a new control plane or node build is a new image.
  h.update(basename(dirname(binDir())))
  h.update(basename(dirname(nodeBinDir())))
  for (const f of KEY_FILES) {
    h.update(`\0${f}\0`)
    h.update(readFileSync(join(KIND_DIR, f)))
  }
  return `kind-${KIND_VERSIONS.kind}-k8s-${VERSIONS.kubernetes}-${h.digest("hex").slice(0, 12)}`
}

/** ~/.cache/nodemend/kind-<key>: bin/ (kind, crictl, coredns, kubeadm, kubectl) and image.json (the stamp). */
export const kindCacheDir = () => join(dirname(cacheRoot()), kindKey())
export const kindBinDir = () => join(kindCacheDir(), "bin")
/** The node image's build record (the cache stamp): { image, builtAt, totalSeconds, stepSeconds }. */
export const IMAGE_STAMP = "image.json"
export const imageStamp = () => {
  try {
    return JSON.parse(readFileSync(join(kindCacheDir(), IMAGE_STAMP), "utf8"))
  } catch {
    return undefined
  }
}
/** The locally assembled node image, tagged with the cache key's hash. */
export const localNodeImage = () => `localhost/nodemend/kind-node:${kindKey().split("-").at(-1)}`
/** podman's storage (the node image lives there between runs) and configuration: one per machine. */
export const podmanDir = () => join(dirname(cacheRoot()), "kind-podman")
