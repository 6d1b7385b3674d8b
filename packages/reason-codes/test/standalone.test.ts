// The package root is imported by customers' automation: it must have zero runtime dependencies and work
// from a plain Node script. Build it into a throwaway node_modules that contains nothing else, then import it.
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, expect, it } from "vitest"
import { CATALOG } from "../src/catalog.ts"

const pkgDir = fileURLToPath(new URL("..", import.meta.url))
const tsc = fileURLToPath(new URL("../../../node_modules/typescript/bin/tsc", import.meta.url))
let app: string
let installed: string

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), "nodemend-rc-"))
  installed = join(app, "node_modules", "@nodemend", "reason-codes")
  mkdirSync(installed, { recursive: true })
  execFileSync(process.execPath, [
    tsc,
    "-p",
    join(pkgDir, "tsconfig.build.json"),
    "--outDir",
    join(installed, "dist")
  ])
  cpSync(join(pkgDir, "package.json"), join(installed, "package.json"))
}, 120_000)

it("declares no runtime dependencies", () => {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as Record<string, unknown>
  expect(pkg.dependencies ?? {}).toEqual({})
  // effect is only an optional peer, for the ./schema subpath.
  expect(pkg.peerDependenciesMeta).toEqual({ effect: { optional: true } })
})

it("the root entry's import graph contains only its own files", () => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const src = readFileSync(file, "utf8")
    for (const m of src.matchAll(
      /(?:import|export)\s[^"']*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g
    )) {
      const spec = (m[1] ?? m[2])!
      expect([file, spec]).toEqual([file, expect.stringMatching(/^\.\.?\//)])
      visit(join(file, "..", spec))
    }
  }
  visit(join(installed, "dist", "index.js"))
  expect(seen.size).toBeGreaterThan(3)
  expect([...seen].some((f) => f.endsWith("schema.js"))).toBe(false)
  expect(readdirSync(join(installed, "dist"))).toContain("index.d.ts")
})

it("works when imported from a plain Node script with nothing else installed", () => {
  writeFileSync(
    join(app, "automation.mjs"),
    `import { parseNodeCondition, CATALOG } from "@nodemend/reason-codes"
const c = parseNodeCondition({ type: "AcceleratedHardwareReady", status: "False", reason: "NvidiaXID79Error" })
console.log(JSON.stringify({ entries: CATALOG.length, kind: c.kind, action: c.resolved.defaultAction }))
`
  )
  const out = execFileSync(process.execPath, [join(app, "automation.mjs")], { cwd: app, encoding: "utf8" })
  expect(JSON.parse(out)).toEqual({ entries: CATALOG.length, kind: "fault", action: "Replace" })
})

it("the customer automation example in docs/examples decides on a node's conditions", () => {
  cpSync(join(pkgDir, "../../docs/examples/customer-automation.mjs"), join(app, "customer-automation.mjs"))
  const node = {
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "KubeletReady" },
        { type: "AcceleratedHardwareReady", status: "False", reason: "NvidiaXID48Error" },
        { type: "NetworkingReady", status: "False", reason: "FromTheFuture" }
      ]
    }
  }
  const out = execFileSync(process.execPath, [join(app, "customer-automation.mjs")], {
    cwd: app,
    input: JSON.stringify(node),
    encoding: "utf8"
  })
  expect(JSON.parse(out)).toEqual([
    { reason: "NvidiaXID48Error", action: "Reboot", page: true, parameters: { code: 48 } },
    { reason: "FromTheFuture", action: "Investigate", page: false, detail: 'unknown reason "FromTheFuture"' }
  ])
})
