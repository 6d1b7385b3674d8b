// Writes what is generated from the catalog: docs/reason-codes.md, json/catalog.json, json/catalog.schema.json.
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderCatalogJson, renderCatalogSchema } from "./catalog-json.ts"
import { renderReasonCodesDoc } from "./render-docs.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const { version } = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }
writeFileSync(`${root}../../docs/reason-codes.md`, renderReasonCodesDoc(version))
mkdirSync(`${root}json`, { recursive: true })
writeFileSync(`${root}json/catalog.json`, renderCatalogJson(version))
writeFileSync(`${root}json/catalog.schema.json`, renderCatalogSchema())
// In the repository's JSON style, so `biome check` passes; the tests compare the parsed content.
execFileSync(`${root}../../node_modules/.bin/biome`, ["format", "--write", `${root}json`], {
  stdio: "ignore"
})
console.log("docs/reason-codes.md, json/catalog.json and json/catalog.schema.json written")
