import { timingReport } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"

// A fresh clone + npm ci (minutes): run with the cluster tests, not in the parallel unit phase.
export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    testTimeout: 120_000,
    hookTimeout: 600_000,
    include: ["test/fresh/**/*.test.mjs"],
    ...timingReport(["test/fresh/**/*.test.mjs"])
  }
})
