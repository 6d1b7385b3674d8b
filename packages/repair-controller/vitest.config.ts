import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  test: { include: ["test/**/*.test.ts"], exclude: ["test/integration/**", "**/node_modules/**"] }
})
