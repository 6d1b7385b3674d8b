import { defineConfig } from "vitest/config"
import { sourceResolve } from "../../vitest.shared.ts"

export default defineConfig({
  ...sourceResolve,
  test: { expect: { requireAssertions: true }, testTimeout: 30_000, include: ["test/*.test.mjs"] }
})
