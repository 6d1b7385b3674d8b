// The catalog shipped as JSON for other languages must say exactly what the TypeScript catalog says.
import { readFileSync } from "node:fs"
import { Schema } from "effect"
import { expect, it } from "vitest"
import { renderCatalogJson, renderCatalogSchema } from "../scripts/catalog-json.ts"
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { KEYS } from "../src/keys.ts"
import { DEFAULT_REPAIR_POLICIES, NEVER_REPAIR_CONDITION_TYPES } from "../src/policies.ts"
import { CatalogDocumentSchema } from "../src/schema.ts"

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")
const { version } = JSON.parse(read("../package.json")) as { version: string }
const REGENERATE = "(run `npm run docs -w @nodemend/reason-codes` if stale)"

it(`json/catalog.json equals the TypeScript catalog ${REGENERATE}`, () => {
  const text = read("../json/catalog.json")
  expect(JSON.parse(text)).toEqual(JSON.parse(renderCatalogJson(version)))
  const doc = JSON.parse(text) as Record<string, unknown>
  expect(doc.version).toBe(version)
  expect(doc.entries).toEqual(CATALOG)
  expect(doc.conditionTypes).toEqual(CONDITION_TYPE_INFO)
  expect(doc.neuronReady).toEqual(NEURON_READY)
  expect(Object.entries(doc.fatalXids as object).map(([x, a]) => [Number(x), a])).toEqual(
    Object.entries(FATAL_XIDS).map(([x, a]) => [Number(x), a])
  )
  expect(doc.defaultRepairPolicies).toEqual(DEFAULT_REPAIR_POLICIES)
  expect(doc.neverRepairConditionTypes).toEqual(NEVER_REPAIR_CONDITION_TYPES)
  expect(doc.keys).toEqual(KEYS)
})

it(`json/catalog.schema.json is the catalog document's schema ${REGENERATE}, and the JSON conforms to it`, () => {
  expect(JSON.parse(read("../json/catalog.schema.json"))).toEqual(JSON.parse(renderCatalogSchema()))
  const doc = JSON.parse(read("../json/catalog.json")) as object
  expect(() => Schema.decodeUnknownSync(CatalogDocumentSchema)(doc)).not.toThrow()
  const bad = { ...doc, entries: [{ ...CATALOG[0], severity: "Fatal" }] }
  expect(() => Schema.decodeUnknownSync(CatalogDocumentSchema)(bad)).toThrow(/severity/)
})
