// Prints the repair controller's folder-level import graph, as dependency-cruiser sees it with the repo's rules
// (.dependency-cruiser.cjs): for each folder of packages/repair-controller/src, lowest layer first, the folders it
// imports (type-only imports count too; `--counts`: and how many). `--agent`: the node agent's (packages/agent/src;
// its src/model.ts is the row `model.ts`, below every folder). docs/architecture.md pastes both without counts, and
// each package's test/architectureDoc.test.ts checks that it is the output.
//   node tools/deps/folder-graph.mjs [--agent] [--counts]
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "..", "..")
const { LAYERS: CONTROLLER_LAYERS, AGENT_LAYERS } = createRequire(import.meta.url)(
  join(ROOT, ".dependency-cruiser.cjs")
)
/** The node agent's src/model.ts: a file below all of its folders. */
const MODEL = "model.ts"

export const folderGraph = ({ counts = false, agent = false } = {}) => {
  const SRC = agent ? "packages/agent/src/" : "packages/repair-controller/src/"
  const LAYERS = agent ? AGENT_LAYERS : CONTROLLER_LAYERS
  // On this process's node (the repo's Node 24): depcruise's shebang would take the machine's.
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, "node_modules", ".bin", "depcruise"),
      "--config",
      ".dependency-cruiser.cjs",
      "--output-type",
      "json",
      SRC
    ],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }
  )
  if (r.status !== 0 && !r.stdout) throw new Error(`depcruise failed: ${r.stderr}`)
  const { modules } = JSON.parse(r.stdout)

  const folderOf = (path) => {
    if (!path.startsWith(SRC)) return undefined
    const rest = path.slice(SRC.length)
    if (agent && rest === MODEL) return MODEL
    return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : "(src/*.ts)"
  }
  const edges = new Map()
  let typeOnly = 0
  for (const m of modules) {
    const from = folderOf(m.source)
    if (from === undefined) continue
    for (const d of m.dependencies) {
      const to = folderOf(d.resolved)
      if (to === undefined || to === from) continue
      if (d.dependencyTypes.includes("type-only")) typeOnly++
      const out = edges.get(from) ?? new Map()
      out.set(to, (out.get(to) ?? 0) + 1)
      edges.set(from, out)
    }
  }
  // Type-only imports are most of what crosses layers; none seen means the parser dropped them.
  if (typeOnly === 0) throw new Error("no type-only import seen: is dependency-cruiser parsing with swc?")

  const order = [...(agent ? [MODEL] : []), ...LAYERS.flat(), "(src/*.ts)"]
  const rank = (f) => (order.includes(f) ? order.indexOf(f) : order.length)
  const layerOf = (f) => LAYERS.findIndex((l) => l.includes(f))
  const width = Math.max(...order.map((f) => f.length))
  const lines = []
  for (const f of [...new Set([...order, ...edges.keys()])].sort((a, b) => rank(a) - rank(b))) {
    const out = [...(edges.get(f) ?? new Map())].sort(([a], [b]) => rank(a) - rank(b))
    const layer = f === MODEL ? "low" : layerOf(f) >= 0 ? `L${layerOf(f)}` : "top"
    const targets = out.map(([t, n]) => (counts ? `${t} ${n}` : t)).join(", ")
    lines.push(`${layer.padEnd(3)} ${f.padEnd(width)} -> ${out.length === 0 ? "(nothing)" : targets}`)
  }
  const pairs = [...edges].flatMap(([a, out]) =>
    [...out.keys()].filter((b) => a < b && edges.get(b)?.has(a) === true).map((b) => `${a} <-> ${b}`)
  )
  lines.push(`folder pairs importing each other: ${pairs.length === 0 ? "none" : pairs.join(", ")}`)
  return lines
}

if (import.meta.url === `file://${process.argv[1]}`)
  for (const line of folderGraph({
    counts: process.argv.includes("--counts"),
    agent: process.argv.includes("--agent")
  }))
    console.log(line)
