// The package as customers use it, on a real Node from the real API server:
//   cd packages/reason-codes && npm run test:cluster
import { fileURLToPath } from "node:url"
import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: clusterTestSettings({ include: ["test/cluster/**/*.itest.ts"], timeoutMs: 180_000 })
})
