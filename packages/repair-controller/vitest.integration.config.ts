import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// Integration tests against the real local cluster (cluster-harness globalSetup; reuses NODEMEND_KUBECONFIG).
export default defineConfig({
  ...sourceResolve,
  test: {
    include: ["test/integration/**/*.test.ts"],
    globalSetup: [fileURLToPath(import.meta.resolve("@nodemend/cluster-harness/globalSetup"))],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false
  }
})
