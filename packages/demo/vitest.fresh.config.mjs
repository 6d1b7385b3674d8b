import { timingReport } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// The demo's cluster-phase files: a fresh clone + npm ci (minutes), and the fleet against NODEMEND_KUBECONFIG's
// cluster. Not in the parallel unit phase.
const files = ["test/fresh/**/*.test.mjs", "test/cluster/**/*.test.mjs"]
export default defineConfig({
  ...sourceResolve,
  test: {
    expect: { requireAssertions: true },
    testTimeout: 120_000,
    hookTimeout: 600_000,
    include: files,
    ...timingReport(files)
  }
})
