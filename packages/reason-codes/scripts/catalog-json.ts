// Renders json/catalog.json (the catalog for automation in other languages) and json/catalog.schema.json
// (its JSON Schema, from the Effect schema in src/schema.ts). Pure, so a test can compare with the files.
import { Schema } from "effect"
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { KEYS } from "../src/keys.ts"
import { DEFAULT_REPAIR_POLICIES, NEVER_REPAIR_CONDITION_TYPES } from "../src/policies.ts"
import { type CatalogDocument, CatalogDocumentSchema } from "../src/schema.ts"

export const catalogDocument = (version: string): CatalogDocument => ({
  version,
  conditionTypes: CONDITION_TYPE_INFO,
  neuronReady: NEURON_READY,
  entries: CATALOG,
  fatalXids: Object.fromEntries(Object.entries(FATAL_XIDS)),
  defaultRepairPolicies: DEFAULT_REPAIR_POLICIES,
  neverRepairConditionTypes: NEVER_REPAIR_CONDITION_TYPES,
  keys: KEYS
})

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`

export const renderCatalogJson = (version: string): string =>
  json({ $schema: "./catalog.schema.json", ...catalogDocument(version) })

export const renderCatalogSchema = (): string => {
  const doc = Schema.toJsonSchemaDocument(CatalogDocumentSchema)
  return json({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    ...doc.schema,
    properties: { $schema: { type: "string" }, ...(doc.schema as { properties?: object }).properties },
    ...(Object.keys(doc.definitions).length > 0 ? { $defs: doc.definitions } : {})
  })
}
