// The package as customers use it: packed, installed from the tarball into a project outside the workspace,
// then imported (ESM), required (CommonJS), compiled with strict TypeScript, bundled, and run through the
// examples in docs/examples. Zero runtime dependencies.
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { rolldown } from "rolldown"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CATALOG } from "../src/catalog.ts"
import { compileStrict, type CustomerProject, examplesDir, packAndInstall, TYPED_FINDINGS } from "./packed.ts"

let project: CustomerProject

const SUMMARY = `({
  exports: Object.keys(rc).sort(),
  entries: rc.CATALOG.length,
  jsonEntries: catalog.entries.length,
  parsed: rc.parseReason("NvidiaXID79Error"),
  action: rc.defaultActionFor("NvidiaXID79Error"),
  taint: REPAIR_TAINT_KEY
})`

const SAMPLE_NODE = {
  spec: { taints: [{ key: "nodemend.io/repair", effect: "NoSchedule" }] },
  status: {
    conditions: [
      { type: "Ready", status: "True", reason: "KubeletReady" },
      { type: "KernelReady", status: "True", reason: "KernelIsReady" },
      { type: "AcceleratedHardwareReady", status: "False", reason: "NvidiaXID48Error" },
      { type: "NetworkingReady", status: "False", reason: "FromTheFuture" }
    ]
  }
}
const XID48 = { conditionType: "AcceleratedHardwareReady", reason: "NvidiaXID48Error" }

/** What each example in docs/examples prints for SAMPLE_NODE. A new example needs an entry here. */
const EXAMPLES: Record<string, unknown> = {
  "customer-automation.mjs": [
    { reason: "NvidiaXID48Error", action: "Reboot", page: true, parameters: { code: 48 } },
    { reason: "FromTheFuture", action: "Investigate", page: false, detail: 'unknown reason "FromTheFuture"' }
  ],
  "node-findings.cjs": {
    findings: [
      {
        conditionType: "AcceleratedHardwareReady",
        status: "False",
        code: "NvidiaXID{code}Error",
        params: { code: 48 },
        severity: "Condition",
        fatal: true,
        action: "Reboot"
      }
    ],
    underRepair: true
  },
  "route-alerts.ts": [
    { reason: "NvidiaXID48Error", to: "gpu-oncall", page: true },
    { reason: "FromTheFuture", to: "network", page: false }
  ]
}

beforeAll(() => {
  project = packAndInstall()
  writeFileSync(
    join(project.app, "esm.mjs"),
    `import * as rc from "@nodemend/reason-codes"
import { REPAIR_TAINT_KEY } from "@nodemend/reason-codes/keys"
import catalog from "@nodemend/reason-codes/catalog.json" with { type: "json" }
console.log(JSON.stringify(${SUMMARY}))`
  )
  writeFileSync(
    join(project.app, "cjs.cjs"),
    `const rc = require("@nodemend/reason-codes")
const { REPAIR_TAINT_KEY } = require("@nodemend/reason-codes/keys")
const catalog = require("@nodemend/reason-codes/catalog.json")
console.log(JSON.stringify(${SUMMARY}))`
  )
  writeFileSync(join(project.app, "typed.mts"), TYPED_FINDINGS)
  writeFileSync(join(project.app, "typed.cts"), TYPED_FINDINGS)
  compileStrict(project, ["typed.mts", "typed.cts", "route-alerts.ts"])
}, 180_000)

afterAll(() => project?.remove())

it("declares no runtime dependencies", () => {
  const pkg = JSON.parse(readFileSync(join(project.installed, "package.json"), "utf8")) as Record<
    string,
    unknown
  >
  expect(pkg.dependencies ?? {}).toEqual({})
  // effect is only an optional peer, for the ./schema subpath.
  expect(pkg.peerDependenciesMeta).toEqual({ effect: { optional: true } })
  expect(readdirSync(join(project.app, "node_modules")).filter((f) => !f.startsWith("."))).toEqual([
    "@nodemend"
  ])
})

it("the tarball holds the builds, the JSON catalog and its schema, the lock, README and CHANGELOG", () => {
  const files = execFileSync("tar", ["-tzf", project.tarball], { encoding: "utf8" }).split("\n")
  for (const f of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/cjs/index.js",
    "dist/cjs/index.d.ts",
    "dist/cjs/package.json",
    "json/catalog.json",
    "json/catalog.schema.json",
    "api/catalog.lock.json",
    "README.md",
    "CHANGELOG.md"
  ])
    expect(files).toContain(`package/${f}`)
  expect(files.filter((f) => /^package\/(test|scripts)\//.test(f))).toEqual([])
})

it("the root entry's import graph, ESM and CommonJS, contains only its own files", () => {
  const graph = (entry: string, pattern: RegExp) => {
    const seen = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const m of readFileSync(file, "utf8").matchAll(pattern)) {
        const spec = m[1]!
        expect([file, spec]).toEqual([file, expect.stringMatching(/^\.\.?\//)])
        visit(join(file, "..", spec))
      }
    }
    visit(join(project.installed, entry))
    return [...seen]
  }
  const esm = graph("dist/index.js", /(?:import|export)\s[^"']*?from\s*["']([^"']+)["']/g)
  const cjs = graph("dist/cjs/index.js", /require\(\s*["']([^"']+)["']\s*\)/g)
  for (const files of [esm, cjs]) {
    expect(files.length).toBeGreaterThan(5)
    expect(files.some((f) => f.endsWith("schema.js"))).toBe(false)
  }
})

it("import (ESM) and require (CommonJS, without require(esm)) give the same API and answers", () => {
  const esm = JSON.parse(project.run("esm.mjs"))
  const cjs = JSON.parse(
    execFileSync(process.execPath, ["--no-experimental-require-module", "cjs.cjs"], {
      cwd: project.app,
      encoding: "utf8"
    })
  )
  expect(esm).toEqual({
    exports: expect.arrayContaining([
      "parseNodeCondition",
      "parseReason",
      "formatReason",
      "REPAIR_TAINT_KEY"
    ]),
    entries: CATALOG.length,
    jsonEntries: CATALOG.length,
    parsed: { code: "NvidiaXID{code}Error", params: { code: 79 } },
    action: "Reboot",
    taint: "nodemend.io/repair"
  })
  expect(cjs).toEqual(esm)
})

it("strict TypeScript resolves the types for import and for require, and the programs run", () => {
  const expected = {
    findings: [
      {
        ...XID48,
        code: "NvidiaXID{code}Error",
        params: { code: 48 },
        severity: "Condition",
        action: "Reboot"
      }
    ],
    entries: CATALOG.length,
    taint: "nodemend.io/repair"
  }
  const input = JSON.stringify(SAMPLE_NODE)
  expect(JSON.parse(project.run("out/typed.mjs", input))).toEqual(expected)
  expect(readFileSync(join(project.app, "out", "typed.cjs"), "utf8")).toMatch(
    /require\("@nodemend\/reason-codes"\)/
  )
  expect(JSON.parse(project.run("out/typed.cjs", input))).toEqual(expected)
})

it("a type error in customer code is reported against the package's types", () => {
  writeFileSync(
    join(project.app, "wrong.mts"),
    `import { formatReason } from "@nodemend/reason-codes"\nformatReason("NvidiaXID{n}Error", { n: 1 })\n`
  )
  expect(() => compileStrict(project, ["wrong.mts"])).toThrow(/wrong\.mts.*NvidiaXID\{n\}Error/s)
})

describe("a bundler keeps only what is used (pure, side-effect-free modules)", () => {
  const bundle = async (source: string) => {
    const entry = join(project.app, `entry-${Math.random().toString(36).slice(2)}.mjs`)
    writeFileSync(entry, source)
    const b = await rolldown({ input: entry, cwd: project.app, platform: "node", logLevel: "silent" })
    const { output } = await b.generate({ format: "esm" })
    await b.close()
    return output.map((o) => ("code" in o ? o.code : "")).join("\n")
  }

  it("a key alone brings no catalog", async () => {
    const code = await bundle(
      `import { REPAIR_TAINT_KEY } from "@nodemend/reason-codes"\nconsole.log(REPAIR_TAINT_KEY)`
    )
    expect(code).toContain("nodemend.io/repair")
    expect(code).not.toContain("SoftLockup")
    expect(code).not.toContain("do-not-repair")
  })

  it("parseReason brings the catalog it needs, not the policies or keys", async () => {
    const code = await bundle(
      `import { parseReason } from "@nodemend/reason-codes"\nconsole.log(parseReason(process.argv[2]))`
    )
    expect(code).toContain("SoftLockup")
    expect(code).not.toContain("tolerationSeconds")
    expect(code).not.toContain("nodemend.io/")
  })
})

describe("docs/examples, run against the installed package", () => {
  it("every example has an expected output here", () => {
    expect(readdirSync(examplesDir).sort()).toEqual(Object.keys(EXAMPLES).sort())
  })

  it.each(Object.entries(EXAMPLES))("%s", (file, expected) => {
    const runnable = file.endsWith(".ts") ? `out/${file.replace(/\.ts$/, ".js")}` : file
    expect(JSON.parse(project.run(runnable, JSON.stringify(SAMPLE_NODE)))).toEqual(expected)
  })
})
