import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// Integration tests against the real local cluster (cluster-harness globalSetup; reuses NODEMEND_KUBECONFIG).
export default defineConfig({
  ...sourceResolve,
  test: clusterTestSettings({
    include: ["test/integration/**/*.test.ts"],
    timeoutMs: 120_000,
    fileParallelism: false,
    // Nothing native in-process: the files share one worker's module graph.
    isolate: false
  })
})
