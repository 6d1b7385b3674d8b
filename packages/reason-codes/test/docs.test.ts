import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { CATALOG } from "../src/catalog.ts"
import { renderReasonCodesDoc } from "../scripts/render-docs.ts"

it("docs/reason-codes.md is generated from the catalog (run `npm run docs -w @nodemend/reason-codes` if stale)", () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string
  }
  const committed = readFileSync(new URL("../../../docs/reason-codes.md", import.meta.url), "utf8")
  expect(committed).toBe(renderReasonCodesDoc(pkg.version))
  for (const e of CATALOG) expect(committed).toContain(`\`${e.code}\``)
})
