// kubectl-nodemend end to end against the real control plane, with agent collectors in-process:
//   cd packages/kubectl-nodemend && npm run test:cluster
import { fileURLToPath } from "node:url"
import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: clusterTestSettings({ include: ["test/cluster/**/*.itest.ts"], timeoutMs: 60_000, isolate: false })
})
