// Cluster tests for capture-before-termination (need the real control plane):
//   cd packages/repair-controller && vitest run --config test/diagnostics/cluster/vitest.config.ts
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../../..", import.meta.url)),
  test: {
    include: ["test/diagnostics/cluster/**/*.itest.ts"],
    globalSetup: [fileURLToPath(import.meta.resolve("@nodemend/cluster-harness/globalSetup"))],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
