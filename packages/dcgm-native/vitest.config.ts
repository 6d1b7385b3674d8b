import { defineConfig } from "vitest/config"
import { unitTestSettings } from "../../vitest.shared.ts"

export default defineConfig({
  resolve: { conditions: ["source"] },
  test: { ...unitTestSettings, globalSetup: ["./test/global-setup.ts"] }
})
