// kubectl-nodemend end to end against the real control plane, with agent collectors in-process:
//   cd packages/kubectl-nodemend && npm run test:cluster
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["test/cluster/**/*.itest.ts"],
    globalSetup: [fileURLToPath(import.meta.resolve("@nodemend/cluster-harness/globalSetup"))],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
