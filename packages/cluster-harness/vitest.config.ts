import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Starts one real cluster per run (or reuses NODEMEND_KUBECONFIG).
    globalSetup: ["@nodemend/cluster-harness/globalSetup"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
