import { defineConfig } from "vitest/config"
import { sourceResolve, unitTestSettings } from "../../vitest.shared.ts"

// Unit tests only; cluster tests run with vitest.integration.config.ts (npm run test:integration).
export default defineConfig({ ...sourceResolve, test: unitTestSettings })
