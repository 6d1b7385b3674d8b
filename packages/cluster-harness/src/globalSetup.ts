// Vitest globalSetup: one real local cluster per test run (or reuse NODEMEND_KUBECONFIG).
//
//   // vitest.config.ts of a package with cluster tests (./vitestConfig.ts names this file as globalSetup)
//   import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
//   export default defineConfig({ ...sourceResolve, test: clusterTestSettings({ include, timeoutMs: 60_000 }) })
//
// Tests read the kubeconfig with `kubeconfigPath()` from "@nodemend/cluster-harness".
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { down, up } from "../../../tools/cluster/cluster.mjs"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

declare module "vitest" {
  export interface ProvidedContext {
    nodemendKubeconfig: string
  }
}

const RUNS_DIR = join(REPO_ROOT, ".nodemend", "test-clusters")

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Cleans up after earlier test runs whose runner process is gone: normally only their logs are left, but a
 * runner killed before teardown leaves its cluster running, so stop that (by its recorded pids) first.
 */
async function pruneOldRuns(): Promise<void> {
  if (!existsSync(RUNS_DIR)) return
  for (const d of readdirSync(RUNS_DIR)) {
    const pid = Number(d)
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) {
      const stateDir = join(RUNS_DIR, d)
      await down({ stateDir, quiet: true })
      rmSync(stateDir, { recursive: true, force: true })
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.NODEMEND_KUBECONFIG
  if (given) {
    if (!existsSync(given)) throw new Error(`NODEMEND_KUBECONFIG=${given} does not exist`)
    project.provide("nodemendKubeconfig", given)
    return async () => {}
  }
  await pruneOldRuns()
  const stateDir = join(RUNS_DIR, String(process.pid))
  const info = await up({ stateDir })
  process.env.NODEMEND_KUBECONFIG = info.kubeconfig
  project.provide("nodemendKubeconfig", info.kubeconfig)
  return async () => {
    // Stops every process by pid; logs stay in <stateDir>/logs until the next run prunes them.
    await down({ stateDir, quiet: true })
  }
}
