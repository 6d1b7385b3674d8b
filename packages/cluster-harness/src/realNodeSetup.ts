// Vitest globalSetup for tests that need the local cluster's real node (kubelet + containerd running the
// images `npm run images` builds): builds the images, then starts one cluster with the real node for the run
// (or reuses the one NODEMEND_REALNODE_STATE_DIR names, importing the fresh images into it), and stops it at
// the end, failing the run when `down` left anything on the host. Tests read the kubeconfig with
// `kubeconfigPath()` (NODEMEND_KUBECONFIG) like every cluster test; the node's name is REAL_NODE_NAME.
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { down, importBuiltImages, up } from "../../../tools/cluster/cluster.mjs"
import { lastDownLeftovers } from "../../../tools/cluster/realnode.mjs"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { buildImages } from "../../../tools/images/build.mjs"

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildImages()
  const given = process.env.NODEMEND_REALNODE_STATE_DIR
  if (given) {
    const kubeconfig = join(given, "kubeconfig")
    if (!existsSync(kubeconfig)) throw new Error(`NODEMEND_REALNODE_STATE_DIR=${given} has no kubeconfig`)
    importBuiltImages(given)
    process.env.NODEMEND_KUBECONFIG = kubeconfig
    project.provide("nodemendKubeconfig", kubeconfig)
    return async () => {}
  }
  const stateDir = join(REPO_ROOT, ".nodemend", "realnode-test")
  const info = await up({ stateDir, realNode: true })
  process.env.NODEMEND_KUBECONFIG = info.kubeconfig
  project.provide("nodemendKubeconfig", info.kubeconfig)
  return async () => {
    rmSync(join(stateDir, "logs", "real-node-down.json"), { force: true })
    await down({ stateDir, quiet: true })
    const left = lastDownLeftovers(stateDir)
    if (left === undefined) throw new Error(`cluster:down did not stop the real node of ${stateDir}`)
    if (left.length) throw new Error(`cluster:down left on the host: ${left.join("; ")}`)
  }
}
