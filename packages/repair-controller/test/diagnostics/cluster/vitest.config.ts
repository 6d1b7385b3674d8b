// Cluster tests for capture-before-termination (need the real control plane):
//   cd packages/repair-controller && vitest run --config test/diagnostics/cluster/vitest.config.ts
import { fileURLToPath } from "node:url"
import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../../..", import.meta.url)),
  test: clusterTestSettings({
    include: ["test/diagnostics/cluster/**/*.itest.ts"],
    timeoutMs: 60_000,
    isolate: false
  })
})
