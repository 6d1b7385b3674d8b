// Log-bundle collection time on this machine (issue #7 target: typical collection <= 7 s).
// usage: node --conditions=source bench/diagnostics-collection.ts [hostRoot=/] [runs=5]
import { mkdtemp, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defaultCollectors } from "../src/diagnostics/Collectors.ts"
import { assembleBundle } from "../src/diagnostics/LogBundle.ts"
import { expandCategories } from "../src/diagnostics/NodeDiagnostic.ts"

const hostRoot = process.argv[2] ?? "/"
const runs = Number(process.argv[3] ?? 5)
const workDir = await mkdtemp(join(tmpdir(), "nodemend-bench-"))
const collection: number[] = []
const total: number[] = []
let size = 0
let errors = ""
for (let i = 0; i < runs; i++) {
  const b = await assembleBundle({
    nodeName: "bench",
    hostRoot,
    collectors: defaultCollectors({
      hostRoot,
      agentState: async () => ({ conditions: [], recentDetections: [] })
    }),
    categories: expandCategories(["All"]),
    workDir
  })
  collection.push(b.collectionMs)
  total.push(b.totalMs)
  size = (await stat(b.path)).size
  errors = b.errors.map((e) => e.name).join(",") || "none"
  await rm(b.path)
}
await rm(workDir, { recursive: true, force: true })
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`host root ${hostRoot}, ${runs} runs`)
console.log(`collection median ${median(collection)} ms, max ${Math.max(...collection)} ms`)
console.log(`collection+tar.gz median ${median(total)} ms, max ${Math.max(...total)} ms`)
console.log(`bundle ${(size / 1024).toFixed(1)} KiB; collector errors on this host: ${errors}`)
