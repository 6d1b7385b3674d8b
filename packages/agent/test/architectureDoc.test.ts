// docs/architecture.md's agent section against the source: its layer table names exactly the folders of the
// agent's src/ in the layers .dependency-cruiser.cjs enforces (AGENT_LAYERS), and its folder graph is
// tools/deps/folder-graph.mjs --agent's output.
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { folderGraph } from "../../../tools/deps/folder-graph.mjs"

const REPO = join(import.meta.dirname, "..", "..", "..")
const SRC = join(REPO, "packages/agent/src")
const doc = readFileSync(join(REPO, "docs/architecture.md"), "utf8")
const section = (heading: string) => {
  const start = doc.indexOf(heading)
  if (start < 0) throw new Error(`docs/architecture.md has no "${heading}"`)
  const end = doc.indexOf("\n## ", start + heading.length)
  return doc.slice(start, end < 0 ? undefined : end)
}

describe("docs/architecture.md, the node agent", () => {
  it("its layer table names the folders of src/, in the layers dependency-cruiser enforces", () => {
    const { AGENT_LAYERS } = createRequire(import.meta.url)(join(REPO, ".dependency-cruiser.cjs")) as {
      AGENT_LAYERS: ReadonlyArray<ReadonlyArray<string>>
    }
    const documented = section("## The node agent, top-down")
      .split("\n")
      .filter((l) => /^\| \d+ \|/.test(l))
      .map((l) => {
        const [layer, folders] = l.slice(2).split(" | ")
        return {
          layer: Number(layer),
          folders: [...(folders ?? "").matchAll(/`([a-z0-9]+)\/`/g)].map((m) => m[1])
        }
      })
    expect(documented).toEqual(AGENT_LAYERS.map((folders, layer) => ({ layer, folders })))
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
    expect(folders.sort()).toEqual(AGENT_LAYERS.flat().sort())
  })

  it("its folder graph is tools/deps/folder-graph.mjs --agent's output", () => {
    const block = section("The agent's folder graph as it is").split("```\n")[1]
    expect(block?.trimEnd().split("\n")).toEqual(folderGraph({ agent: true }))
  }, 60_000)
})
