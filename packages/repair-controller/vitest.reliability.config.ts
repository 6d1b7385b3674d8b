import { clusterTestSettings } from "@nodemend/cluster-harness/vitest"
import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// Reliability trials against the real local cluster and the fake cloud (docs/reliability.md). Bounded by
// default; NODEMEND_RELIABILITY_LONG=1 runs the long variants (bench/reliability-long.sh).
export default defineConfig({
  ...sourceResolve,
  test: clusterTestSettings({
    include: ["test/reliability/**/*.rtest.ts"],
    timeoutMs: process.env.NODEMEND_RELIABILITY_LONG === "1" ? 3_600_000 : 240_000,
    fileParallelism: false,
    // Nothing native in-process: the files share one worker's module graph.
    isolate: false
  })
})
