#!/usr/bin/env node
/**
 * Bundles a binary's TypeScript entry into one minified ESM file (what we ship and run on nodes).
 *
 *   node tools/bundle/bundle.mjs <entry.ts> <out.mjs> [--external <pkg>]... [--lazy-external <pkg>]...
 *
 * Why: running the sources through Node's type stripping loads hundreds of modules (effect alone is
 * ~300) and keeps their source text; one tree-shaken file starts faster and costs tens of MiB less
 * RSS (ADR 0006). Workspace packages resolve to src/ through the `source` condition, so the bundle
 * never needs a prior tsc build. Packages with native parts (koffi) stay external and are loaded
 * from node_modules at run time.
 *
 * An `--external` package is imported at the top of the bundle, so it loads at start even when only a
 * dynamically imported part uses it. A `--lazy-external` package is also left out of the bundle but
 * required (createRequire, resolved from the bundle's folder) by the module that imports it, when that
 * module is first evaluated: koffi and its native library then load only on nodes whose agent imports
 * the NVIDIA monitor. Only its default import is supported (koffi is CommonJS).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { build } from "rolldown"
import { parseArgs } from "node:util"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    external: { type: "string", multiple: true, default: [] },
    "lazy-external": { type: "string", multiple: true, default: [] }
  }
})
const [entry, out] = positionals
if (!entry || !out) {
  console.error("usage: bundle.mjs <entry.ts> <out.mjs> [--external <pkg>]... [--lazy-external <pkg>]...")
  process.exit(2)
}
const LAZY = "\0lazy-external:"
const lazyExternals = new Set(values["lazy-external"])
/** Resolves a lazy external to a small module that requires it when evaluated. */
const lazyExternalPlugin = {
  name: "lazy-external",
  resolveId: (id) => (lazyExternals.has(id) ? `${LAZY}${id}` : null),
  load: (id) =>
    id.startsWith(LAZY)
      ? `import { createRequire } from "node:module"\nexport default createRequire(import.meta.url)(${JSON.stringify(id.slice(LAZY.length))})\n`
      : null
}
const started = Date.now()
await build({
  input: entry,
  platform: "node",
  plugins: [lazyExternalPlugin],
  resolve: { conditionNames: ["source", "node", "import", "production", "default"] },
  external: [
    /^node:/,
    ...values.external.map((name) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(/|$)`))
  ],
  output: { file: out, format: "esm", minify: true, sourcemap: false, codeSplitting: false },
  logLevel: "warn"
})
// V8 keeps a script's source for its whole life, two bytes per character as soon as one character is
// outside Latin-1: escaping the few non-ASCII characters (an ellipsis, a BOM in string literals) halves it.
// \uXXXX means the same in string, template and regex literals and in identifiers.
const code = readFileSync(out, "utf8")
const ascii = code.replace(/[^\0-\x7f]/gu, (ch) =>
  Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")
)
if (ascii !== code) writeFileSync(out, ascii)
console.log(`[bundle] ${out} in ${Date.now() - started} ms`)
