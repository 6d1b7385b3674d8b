// The agent's reliability trials against the real local cluster (docs/reliability.md):
//   cd packages/agent && vitest run --config test/reliability/vitest.config.ts
// Bounded by default; NODEMEND_RELIABILITY_LONG=1 runs the long variant (a million malformed lines).
import { fileURLToPath } from "node:url"
import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: clusterTestSettings({
    include: ["test/reliability/**/*.itest.ts"],
    timeoutMs: process.env.NODEMEND_RELIABILITY_LONG === "1" ? 3_600_000 : 240_000
  })
})
