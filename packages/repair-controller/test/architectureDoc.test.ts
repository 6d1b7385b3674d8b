// docs/architecture.md against the source: its layer table names exactly the folders of src/ and the layers of
// .dependency-cruiser.cjs, its folder graph is tools/deps/folder-graph.mjs's output, and its in-memory state table
// lists exactly the holders tools/deps/holders.mjs finds (each with what a restart does to it).
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { folderGraph } from "../../../tools/deps/folder-graph.mjs"
import { SRC, scanHolders } from "../../../tools/deps/holders.mjs"

const REPO = join(SRC, "..", "..", "..")
const PKG = join(SRC, "..")
const doc = readFileSync(join(REPO, "docs/architecture.md"), "utf8")
const section = (heading: string) => {
  const start = doc.indexOf(heading)
  if (start < 0) throw new Error(`docs/architecture.md has no "${heading}"`)
  const end = doc.indexOf("\n## ", start + heading.length)
  return doc.slice(start, end < 0 ? undefined : end)
}
const tableRows = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| ---"))
    .slice(1)
    .map((l) => l.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "").trim()))

describe("docs/architecture.md", () => {
  it("its layer table names the folders of src/, in the layers dependency-cruiser enforces", () => {
    const { LAYERS } = createRequire(import.meta.url)(join(REPO, ".dependency-cruiser.cjs")) as {
      LAYERS: ReadonlyArray<ReadonlyArray<string>>
    }
    const documented = tableRows(section("## The repair controller, top-down"))
      .filter(([layer]) => /^\d+$/.test(layer ?? ""))
      .map(([, folders]) => [...(folders ?? "").matchAll(/`([a-z]+)\/`/g)].map((m) => m[1]))
    expect(documented).toEqual(LAYERS)
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
    expect(folders.sort()).toEqual(LAYERS.flat().sort())
  })

  it("its folder graph is tools/deps/folder-graph.mjs's output", () => {
    const block = section("The folder graph as it is").split("```\n")[1]
    expect(block?.trimEnd().split("\n")).toEqual(folderGraph())
  }, 60_000)

  it("its in-memory state table lists every holder in the source, with what a restart does to it", () => {
    const rows = tableRows(section("## In-memory state")).map(([holder, keeps, restart]) => {
      const m = /^`([\w/.]+\.ts)` `(\w+)`$/.exec(holder ?? "")
      if (m === null) throw new Error(`holder cell not "\`file\` \`factory\`": ${holder}`)
      return { file: m[1], factory: m[2], vars: (keeps ?? "").split(", "), restart: restart ?? "" }
    })
    const key = (h: { file?: string; factory?: string }) => `${h.file} ${h.factory}`
    expect(rows.map((r) => `${key(r)}: ${r.vars.join(", ")}`).sort()).toEqual(
      scanHolders()
        .map((h) => `${key(h)}: ${h.vars.join(", ")}`)
        .sort()
    )
    for (const r of rows) {
      expect(r.restart, key(r)).toMatch(/^\*\*(journal|rebuilt|lost safely)\*\*/)
      // A journal's restart is tested: the row names the test, which exists.
      if (r.restart.startsWith("**journal**")) {
        const test = /\((test\/[\w/.]+\.ts)/.exec(r.restart)?.[1]
        expect(test, `${key(r)} names its restart test`).toBeDefined()
        expect(existsSync(join(PKG, test ?? "")), `${test} exists`).toBe(true)
      }
    }
  })
})
