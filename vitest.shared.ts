// Shared vitest settings: resolve workspace packages to their TypeScript sources (the `source` export condition).
const conditions = ["source", "node", "development|production"]

export const sourceResolve = {
  resolve: { conditions },
  ssr: { resolve: { conditions } }
}

// Unit tests of a package whose cluster tests live in test/integration (run by its vitest.integration.config.ts).
export const unitTestSettings = {
  // A test that asserts nothing passes unless something throws: refused (issue #26).
  expect: { requireAssertions: true },
  // One worker module graph for all files: each file's own fork cost ~0.5 s of CPU, a third of the unit phase.
  isolate: false,
  testTimeout: 30_000,
  hookTimeout: 60_000,
  include: ["test/**/*.test.ts"],
  exclude: ["test/integration/**", "**/node_modules/**"]
}
