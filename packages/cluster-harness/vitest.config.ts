import { defineConfig } from "vitest/config"
import { clusterTestSettings } from "./src/vitestConfig.ts"

// Starts one real cluster per run (or reuses NODEMEND_KUBECONFIG).
export default defineConfig({
  test: clusterTestSettings({ include: ["test/**/*.test.ts"], timeoutMs: 60_000 })
})
