// The agent bundle exactly as tools/bundle/bundle.mjs builds it (rolldown, minified ESM, koffi lazy, non-ASCII
// escaped), with source modules swapped for variants (ADR 0013). The shipped bundle is not touched.
//   node bench/adr-0013/bundle-agent.mjs <out.mjs> [<agent source module> <variant file>]...
// Libraries resolve from $ADR_TMP/node_modules (default /tmp/adr27: npm install --prefix there).
import { readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const tmp = process.env.ADR_TMP ?? "/tmp/adr27"
const [out, ...pairs] = process.argv.slice(2)
const swaps = new Map()
for (let i = 0; i < pairs.length; i += 2) swaps.set(resolve(pairs[i]), resolve(pairs[i + 1]))
const LAZY = "\0lazy-external:"
await build({
  input: resolve(repo, "packages/agent/src/main.ts"),
  platform: "node",
  plugins: [
    {
      name: "lazy-external",
      resolveId: (id) => (id === "koffi" ? `${LAZY}${id}` : null),
      load: (id) =>
        id.startsWith(LAZY)
          ? `import { createRequire } from "node:module"\nexport default createRequire(import.meta.url)(${JSON.stringify(id.slice(LAZY.length))})\n`
          : null
    },
    {
      name: "swap",
      resolveId: (id, importer) =>
        importer === undefined || !id.startsWith(".")
          ? null
          : (swaps.get(resolve(importer, "..", id)) ?? null)
    }
  ],
  resolve: {
    conditionNames: ["source", "node", "import", "production", "default"],
    modules: ["node_modules", resolve(tmp, "node_modules"), resolve(repo, "node_modules")]
  },
  external: [/^node:/],
  output: { file: out, format: "esm", minify: true, sourcemap: false, codeSplitting: false },
  logLevel: "warn"
})
const code = readFileSync(out, "utf8")
const ascii = code.replace(/[^\0-\x7f]/gu, (ch) =>
  Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")
)
if (ascii !== code) writeFileSync(out, ascii)
console.log(out, Buffer.byteLength(ascii))
