import { defineConfig } from "vitest/config"
import { sourceResolve, unitTestSettings } from "../../vitest.shared.ts"

export default defineConfig({ ...sourceResolve, test: unitTestSettings })
