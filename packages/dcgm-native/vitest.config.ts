import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["source"] },
  test: {
    expect: { requireAssertions: true },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"]
  }
})
