import { defineConfig } from "vitest/config"
import { sourceResolve, unitTestSettings } from "../../vitest.shared.ts"

// helm lint/template tests: no cluster. globalSetup builds helm once (a no-op when cached).
export default defineConfig({
  ...sourceResolve,
  test: {
    ...unitTestSettings,
    exclude: ["test/cluster/**", "test/realnode/**", "test/kind/**", "**/node_modules/**"],
    globalSetup: ["./test/helmSetup.ts"],
    hookTimeout: 900_000
  }
})
