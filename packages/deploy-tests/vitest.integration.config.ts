import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// Server-side dry runs of the rendered chart against the real cluster (reuses NODEMEND_KUBECONFIG).
export default defineConfig({
  ...sourceResolve,
  test: {
    expect: { requireAssertions: true },
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: [
      "./test/helmSetup.ts",
      fileURLToPath(import.meta.resolve("@nodemend/cluster-harness/globalSetup"))
    ],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    // Nothing native in-process (the agents the Prometheus stories run are processes): one module graph for all files.
    isolate: false
  }
})
