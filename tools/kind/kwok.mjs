// kwok in the kind cluster without downloads: the project's kwok binary (tools/cluster/build.mjs, the same pin) in an
// image buildah makes from scratch, and kwok's own kustomize manifests from the kwok module in the Go module cache,
// applied by the control-plane node's kubectl with only the image tag set. The Stages are the local cluster's
// (tools/cluster/kwok/stages.yaml). kwok selects fake Nodes by the annotation kwok.x-k8s.io/node=fake, which
// @nodemend/cluster-harness's createFakeNode sets (with the label the local cluster's kwok selects on).
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { VERSIONS } from "../cluster/versions.mjs"
import { kindCacheDir } from "./versions.mjs"

export const KWOK_IMAGE = `registry.k8s.io/kwok/kwok:${VERSIONS.kwok}`

/** The kwok image as an OCI archive (cached next to the kind tools); returns its path. */
export async function kwokImage(kwokBin) {
  const out = join(kindCacheDir(), "kwok.tar")
  if (existsSync(out)) return out
  const storage = join(kindCacheDir(), "kwok-buildah")
  const ctx = join(storage, "context")
  mkdirSync(ctx, { recursive: true })
  copyFileSync(kwokBin, join(ctx, "kwok"))
  const buildah = (args) =>
    execFileSync(
      "buildah",
      [
        "--root",
        join(storage, "root"),
        "--runroot",
        join(storage, "run"),
        "--storage-driver",
        "vfs",
        ...args
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }
    ).trim()
  try {
    const c = buildah(["from", "scratch"])
    buildah(["copy", "--chmod", "0755", c, join(ctx, "kwok"), "/usr/local/bin/kwok"])
    buildah(["config", "--entrypoint", '["/usr/local/bin/kwok"]', c])
    buildah(["commit", "--quiet", "--timestamp", "0", "--rm", c, KWOK_IMAGE])
    buildah(["push", "--quiet", "--format", "oci", KWOK_IMAGE, `oci-archive:${out}.partial:${KWOK_IMAGE}`])
    execFileSync("mv", [`${out}.partial`, out])
    return out
  } finally {
    rmSync(storage, { recursive: true, force: true })
  }
}

/** kwok's kustomize directory in the Go module cache. */
function kustomizeDir() {
  const modCache = execFileSync("go", ["env", "GOMODCACHE"], {
    encoding: "utf8",
    env: { ...process.env, GOTOOLCHAIN: "local" }
  }).trim()
  const dir = join(modCache, `sigs.k8s.io/kwok@${VERSIONS.kwok}`, "kustomize")
  if (!existsSync(dir))
    throw new Error(
      `kwok's manifests are missing from the Go module cache: ${dir} (npm run cluster:build fetches them)`
    )
  return dir
}

export const overlay = () => `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../kwok-kustomize/kwok
images:
  - name: registry.k8s.io/kwok/kwok
    newTag: ${VERSIONS.kwok}
`

/** Applies kwok (CRDs, RBAC, the controller) and the Stages, and waits for the controller. */
export function kwokManifests(p, kubectl, node, stagesFile) {
  p.run(p.engine, ["exec", node, "rm", "-rf", "/kind/kwok-kustomize", "/kind/kwok-overlay"])
  p.run(p.engine, ["cp", kustomizeDir(), `${node}:/kind/kwok-kustomize`])
  p.run(
    p.engine,
    [
      "exec",
      "-i",
      node,
      "sh",
      "-c",
      "mkdir -p /kind/kwok-overlay && cat > /kind/kwok-overlay/kustomization.yaml"
    ],
    overlay()
  )
  kubectl(p, ["apply", "--server-side", "-k", "/kind/kwok-overlay"])
  kubectl(p, ["wait", "--for=condition=Established", "crd/stages.kwok.x-k8s.io", "--timeout=60s"])
  kubectl(p, ["apply", "--server-side", "-f", "-"], readFileSync(stagesFile, "utf8"))
  kubectl(p, ["-n", "kube-system", "rollout", "status", "deployment/kwok-controller", "--timeout=180s"])
}
