import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

// Unit tests only; cluster tests run with vitest.integration.config.ts (npm run test:integration).
export default defineConfig({
  ...sourceResolve,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    exclude: ["test/integration/**", "**/node_modules/**"]
  }
})
