// The `test` settings of a package's cluster-test vitest config: this harness's globalSetup (one real cluster
// per run, or the one NODEMEND_KUBECONFIG names) and per-test and per-hook timeouts sized for a real control
// plane. A config spreads them next to `sourceResolve`:
//
//   export default defineConfig({ ...sourceResolve, test: clusterTestSettings({ include: [...], timeoutMs: 60_000 }) })
import { createHash } from "node:crypto"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export interface ClusterTestOptions {
  readonly include: string[]
  /** Bound on each test and each hook. */
  readonly timeoutMs: number
  /** false: one test file at a time (files whose controllers or agents would see each other's Nodes). */
  readonly fileParallelism?: boolean
  /**
   * false: the files share one worker's module graph (the Kubernetes client, Effect and the sources are loaded
   * once, not once per file: ~1-3 s of CPU each). Only for files that load nothing native in-process (koffi).
   */
  readonly isolate?: boolean
}

/**
 * With NODEMEND_TEST_TIMES set (a directory; `npm test` sets it), each run also writes vitest's JSON report there,
 * one file per package, config and command line (its file filters), which tools/test-times.mjs turns into the per-file table `npm test` prints.
 */
export const timingReport = (include: string[]) => {
  const dir = process.env.NODEMEND_TEST_TIMES
  if (dir === undefined || dir === "") return {}
  const id = createHash("sha256")
    .update(`${process.cwd()}\0${include.join(",")}\0${process.argv.slice(2).join(" ")}`)
    .digest("hex")
    .slice(0, 12)
  return {
    reporters: ["default", "json"],
    outputFile: { json: join(dir, `${id}.json`) }
  }
}

export const clusterTestSettings = ({
  include,
  timeoutMs,
  fileParallelism,
  isolate
}: ClusterTestOptions) => ({
  include,
  // A test that asserts nothing passes unless something times out: refused (issue #26).
  expect: { requireAssertions: true },
  // By default a fork per file (vitest's default), unlike the unit tests: with one worker for all files, a native
  // test double koffi loaded for one agent file kept that file's state into the next (nvidia.test.ts failed in CI).
  ...(isolate === false ? { isolate: false } : {}),
  ...timingReport(include),
  // import.meta.url, not import.meta.resolve: vite rewrites it to this file's path when it bundles a config.
  globalSetup: [fileURLToPath(new URL("./globalSetup.ts", import.meta.url))],
  testTimeout: timeoutMs,
  hookTimeout: timeoutMs,
  ...(fileParallelism === undefined ? {} : { fileParallelism })
})
