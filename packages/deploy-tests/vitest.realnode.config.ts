import { fileURLToPath } from "node:url"
import { timingReport } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// The chart and deploy/ on the local cluster's real node (kubelet + containerd running the images `npm run
// images` builds): a separate, bounded phase of `npm test` (scripts/test.mjs), one cluster with the real node.
export default defineConfig({
  ...sourceResolve,
  test: {
    expect: { requireAssertions: true },
    include: ["test/realnode/**/*.test.ts"],
    ...timingReport(["test/realnode/**/*.test.ts"]),
    globalSetup: [
      "./test/helmSetup.ts",
      fileURLToPath(import.meta.resolve("@nodemend/cluster-harness/realNodeSetup"))
    ],
    testTimeout: 120_000,
    hookTimeout: 900_000,
    fileParallelism: false
  }
})
