import { defineConfig } from "vitest/config"
import { sourceResolve, unitTestSettings } from "../../vitest.shared.ts"

// Unit tests only; cluster tests run with vitest.integration.config.ts (npm run test:integration).
// Two groups: every unit test file first, then the reason-code coverage test, which reads the ledger of
// reasons the others produced (test/reasons/produced-reasons.ts).
const COVERAGE = "test/reasons/**/*.test.ts"
const { include, exclude, ...shared } = unitTestSettings
export default defineConfig({
  ...sourceResolve,
  test: {
    ...shared,
    globalSetup: ["test/reasons/fresh-ledger.ts"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include, exclude: [...exclude, COVERAGE], sequence: { groupOrder: 1 } }
      },
      {
        extends: true,
        test: { name: "reason-coverage", include: [COVERAGE], exclude, sequence: { groupOrder: 2 } }
      }
    ]
  }
})
