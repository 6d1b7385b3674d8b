import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// helm lint/template tests: no cluster. globalSetup builds helm once (a no-op when cached).
export default defineConfig({
  ...sourceResolve,
  test: {
    expect: { requireAssertions: true },
    include: ["test/**/*.test.ts"],
    exclude: ["test/cluster/**", "test/realnode/**", "test/kind/**", "**/node_modules/**"],
    globalSetup: ["./test/helmSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 900_000
  }
})
