import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"
import { GPU_FILES } from "./vitest.integration.config.ts"

// The integration files with the GPU test doubles (vitest.integration.config.ts), a fork each.
export default defineConfig({
  ...sourceResolve,
  test: clusterTestSettings({ include: GPU_FILES, timeoutMs: 120_000, fileParallelism: false })
})
