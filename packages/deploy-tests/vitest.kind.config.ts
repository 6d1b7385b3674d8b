import { timingReport } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// The chart on a kind cluster (`npm run kind:up`: real kubelets in node containers, the images `npm run images`
// builds, kwok in the cluster): `npm test`'s kind phase (scripts/test.mjs), against NODEMEND_KUBECONFIG.
export default defineConfig({
  ...sourceResolve,
  test: {
    expect: { requireAssertions: true },
    include: ["test/kind/**/*.test.ts"],
    ...timingReport(["test/kind/**/*.test.ts"]),
    globalSetup: ["./test/helmSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false
  }
})
