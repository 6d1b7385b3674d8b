// Log-bundle collection time on this machine (issue #7 target: typical collection <= 7 s).
// usage: node --conditions=source bench/diagnostics-collection.ts [hostRoot=/] [runs=5]
import { mkdtemp, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defaultCollectors } from "../src/diagnostics/Collectors.ts"
import { assembleBundle } from "../src/diagnostics/LogBundle.ts"
import { expandCategories } from "@nodemend/kube-access/NodeDiagnostic"

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

// Redaction throughput: what bounds a large journal or kernel log on its way into the bundle.
{
  const { Readable } = await import("node:stream")
  const { pipeline } = await import("node:stream/promises")
  const { Writable } = await import("node:stream")
  const { redactionTransform } = await import("../src/diagnostics/Redaction.ts")
  const line =
    '2026-01-01T00:00:00.000000+00:00 ip-10-0-1-23 kubelet[1234]: I0101 00:00:00.000000 1234 kubelet.go:2468] "SyncLoop UPDATE" source="api" pods=["kube-system/aws-node-abcde"]\n'
  const mib = 64
  const chunk = Buffer.from(line.repeat(Math.ceil(65536 / line.length)))
  const chunks = Math.ceil((mib * 1024 * 1024) / chunk.length)
  const t0 = performance.now()
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < chunks; i++) yield chunk
      })()
    ),
    redactionTransform(),
    new Writable({ write: (_c, _e, cb) => cb() })
  )
  const s = (performance.now() - t0) / 1000
  console.log(
    `redaction throughput ${((chunks * chunk.length) / 1024 / 1024 / s).toFixed(0)} MiB/s (${mib} MiB of kubelet-like lines)`
  )
}
