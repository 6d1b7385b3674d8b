// Builds dist/ (ESM, for `import`) and dist/cjs/ (CommonJS, for `require`). The package root is data and
// pure functions, so the two copies cannot disagree in state; the effect-based ./schema subpath is ESM only.
import { execFileSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const tsc = fileURLToPath(new URL("../../../node_modules/typescript/bin/tsc", import.meta.url))
const outDir = process.argv[2] ?? `${root}dist`

rmSync(outDir, { recursive: true, force: true })
for (const [config, out] of [
  ["tsconfig.build.json", outDir],
  ["tsconfig.cjs.json", `${outDir}/cjs`]
] as const)
  execFileSync(process.execPath, [tsc, "-p", `${root}${config}`, "--outDir", out], { stdio: "inherit" })
writeFileSync(`${outDir}/cjs/package.json`, `${JSON.stringify({ type: "commonjs" })}\n`)
