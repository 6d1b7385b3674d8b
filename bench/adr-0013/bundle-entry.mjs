// Bundles one measurement entry like the agent (rolldown, minified ESM); `VARIANT` in the entry is the given module.
//   node bench/adr-0013/bundle-entry.mjs <entry.ts> <out.mjs> [<variant module>]
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const tmp = process.env.ADR_TMP ?? "/tmp/adr27"
const [entry, out, variant] = process.argv.slice(2)
await build({
  input: entry,
  platform: "node",
  plugins: [{ name: "variant", resolveId: (id) => (id === "VARIANT" && variant ? resolve(variant) : null) }],
  resolve: {
    conditionNames: ["source", "node", "import", "production", "default"],
    modules: ["node_modules", resolve(tmp, "node_modules"), resolve(repo, "node_modules")]
  },
  external: [/^node:/],
  output: { file: out, format: "esm", minify: true, codeSplitting: false },
  logLevel: "warn"
})
