import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { configDefaults, defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

/**
 * The files whose in-process agent may load the NVML/DCGM test doubles through koffi: a native library keeps its
 * state for the life of the process, so these run in a fork each (vitest.gpu.config.ts).
 */
export const GPU_FILES = [
  "test/integration/agent-bundle.test.ts",
  "test/integration/agent-gpu.test.ts",
  "test/integration/nvidia-policy-violations.test.ts",
  "test/integration/nvidia.test.ts"
]

// Integration tests against the real local cluster (cluster-harness globalSetup; reuses NODEMEND_KUBECONFIG). Nothing
// native in-process: the files share one worker's module graph.
export default defineConfig({
  ...sourceResolve,
  test: {
    ...clusterTestSettings({
      include: ["test/integration/**/*.test.ts"],
      timeoutMs: 120_000,
      fileParallelism: false,
      isolate: false
    }),
    exclude: [...configDefaults.exclude, ...GPU_FILES]
  }
})
