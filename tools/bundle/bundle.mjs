#!/usr/bin/env node
/**
 * Bundles a binary's TypeScript entry into one minified ESM file (what we ship and run on nodes).
 *
 *   node tools/bundle/bundle.mjs <entry.ts> <out.mjs> [--external <pkg>]...
 *
 * Why: running the sources through Node's type stripping loads hundreds of modules (effect alone is
 * ~300) and keeps their source text; one tree-shaken file starts faster and costs tens of MiB less
 * RSS (ADR 0006). Workspace packages resolve to src/ through the `source` condition, so the bundle
 * never needs a prior tsc build. Packages with native parts (koffi) stay external and are loaded
 * from node_modules at run time.
 */
import { build } from "rolldown"
import { parseArgs } from "node:util"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { external: { type: "string", multiple: true, default: [] } }
})
const [entry, out] = positionals
if (!entry || !out) {
  console.error("usage: bundle.mjs <entry.ts> <out.mjs> [--external <pkg>]...")
  process.exit(2)
}
const started = Date.now()
await build({
  input: entry,
  platform: "node",
  resolve: { conditionNames: ["source", "node", "import", "production", "default"] },
  external: [
    /^node:/,
    ...values.external.map((name) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(/|$)`))
  ],
  output: { file: out, format: "esm", minify: true, sourcemap: false, codeSplitting: false },
  logLevel: "warn"
})
console.log(`[bundle] ${out} in ${Date.now() - started} ms`)
