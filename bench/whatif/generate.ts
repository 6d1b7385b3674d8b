/**
 * A synthetic week of a 5,000-node fleet in the what-if history format (docs/operations.md, "What-if replay"), for
 * bench/whatif/replay.ts. Deterministic (seeded). Usage:
 *
 *   node --conditions=source bench/whatif/generate.ts [out.jsonl] [--nodes 5000] [--days 7] [--seed 1]
 *
 * The fleet, spread over three zones: `general` (60%), `gpu` (20%), `batch` (16%), `bad` (4%, a broken image).
 * - The recording opens as `kubectl nodemend record` does: a node line and the six recorded conditions, healthy.
 * - Genuine faults that stay until the node is repaired or the week ends: 0.4% of the nodes a day (Ready=False
 *   KubeletNotReady, HardwareErrorFatal, ContainerRuntimeUnhealthy, FilesystemRemountedReadOnly, XFSFilesystemShutdown,
 *   IPAMDNotReady), and 1.5% of the gpu pool a day (XID 79, 48, double-bit).
 * - Flaps that recover by themselves: Ready=Unknown for 1-8 min (0.3 per node a week), agent conditions False for
 *   2-25 min (0.1 per node a week), and long ones, 35-120 min, past their toleration (0.02 per node a week).
 * - The bad pool: on day 3, 45% of its nodes report ContainerRuntimeReady=False (ContainerRuntimeUnhealthy) within
 *   two hours (the breaker opens).
 * - Churn: 3% of the fleet a day scales in (deleted) and as many new nodes join.
 */
import { writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { type HistoryLine, historyLine, isoTime } from "@nodemend/repair-controller/whatif"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    nodes: { type: "string", default: "5000" },
    days: { type: "string", default: "7" },
    seed: { type: "string", default: "1" }
  }
})
const out = positionals[0] ?? "/tmp/whatif-week.jsonl"
const NODES = Number(values.nodes)
const DAYS = Number(values.days)
const MIN = 60_000
const DAY = 24 * 60 * MIN
const T0 = Date.parse("2026-11-23T00:00:00Z")
const END = T0 + DAYS * DAY

/** mulberry32 */
let state = Number(values.seed) >>> 0
const rand = () => {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!
const between = (a: number, b: number) => a + rand() * (b - a)
/** Poisson-ish count with mean `m`. */
const count = (m: number) => {
  let n = Math.floor(m)
  if (rand() < m - n) n++
  return n
}

const ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
const TYPES = [
  "Ready",
  "KernelReady",
  "ContainerRuntimeReady",
  "NetworkingReady",
  "StorageReady",
  "AcceleratedHardwareReady"
] as const
const HEALTHY: Record<(typeof TYPES)[number], string> = {
  Ready: "KubeletReady",
  KernelReady: "KernelIsReady",
  ContainerRuntimeReady: "ContainerRuntimeIsReady",
  NetworkingReady: "NetworkingIsReady",
  StorageReady: "DiskIsReady",
  AcceleratedHardwareReady: "NvidiaGPUIsReady"
}
const FAULTS: ReadonlyArray<readonly [(typeof TYPES)[number], string]> = [
  ["Ready", "KubeletNotReady"],
  ["KernelReady", "HardwareErrorFatal"],
  ["ContainerRuntimeReady", "ContainerRuntimeUnhealthy"],
  ["StorageReady", "FilesystemRemountedReadOnly"],
  ["StorageReady", "XFSFilesystemShutdown"],
  ["NetworkingReady", "IPAMDNotReady"]
]
const GPU_FAULTS = ["NvidiaXID79Error", "NvidiaXID48Error", "NvidiaDoubleBitError"]
const FLAPPY: ReadonlyArray<readonly [(typeof TYPES)[number], string]> = [
  ["NetworkingReady", "InterfaceNotRunning"],
  ["ContainerRuntimeReady", "ContainerRuntimeUnhealthy"],
  ["StorageReady", "IODelays"],
  ["KernelReady", "ConntrackExceededKernel"]
]

interface Node {
  readonly name: string
  readonly pool: string
  readonly zone: string
  readonly from: number
  to: number
}
const lines: HistoryLine[] = []
const nodes: Node[] = []
let serial = 0
const poolFor = (i: number, n: number) =>
  i < n * 0.6 ? "general" : i < n * 0.8 ? "gpu" : i < n * 0.96 ? "batch" : "bad"
const join = (pool: string, at: number, snapshot: boolean): Node => {
  const node = {
    name: `ip-10-${serial >> 8}-${serial & 255}-${pool}`,
    pool,
    zone: pick(ZONES),
    from: at,
    to: END
  }
  serial++
  nodes.push(node)
  lines.push({ v: 1, kind: "node", at: isoTime(at), node: node.name, pool, zone: node.zone })
  for (const type of TYPES) {
    if (type === "AcceleratedHardwareReady" && pool !== "gpu") continue
    const since = snapshot ? at - Math.floor(between(1, 30) * DAY) : at
    lines.push(cond(node, since, type, "True", HEALTHY[type]))
  }
  return node
}
const cond = (
  n: Node,
  at: number,
  type: string,
  status: "True" | "False" | "Unknown",
  reason: string
): HistoryLine => ({
  v: 1,
  kind: "condition",
  at: isoTime(at),
  node: n.name,
  pool: n.pool,
  zone: n.zone,
  type,
  status,
  reason
})
/** A condition unhealthy from `at` for `ms` (or to the node's end), then healthy again. */
const episode = (
  n: Node,
  at: number,
  ms: number,
  type: (typeof TYPES)[number],
  status: "False" | "Unknown",
  reason: string
) => {
  if (at >= n.to) return
  lines.push(cond(n, at, type, status, reason))
  const back = at + ms
  if (back < n.to) lines.push(cond(n, back, type, "True", HEALTHY[type]))
}

lines.push({ v: 1, kind: "mark", at: isoTime(T0), mark: "start", note: "bench/whatif/generate.ts" })
for (let i = 0; i < NODES; i++) join(poolFor(i, NODES), T0, true)
// Churn: scale-in and scale-out through the week.
for (let d = 0; d < DAYS; d++) {
  for (let k = 0; k < count(NODES * 0.03); k++) {
    const at = T0 + d * DAY + Math.floor(rand() * DAY)
    const victim = pick(nodes.filter((n) => n.to === END && n.from < at))
    victim.to = at
    lines.push({ v: 1, kind: "deleted", at: isoTime(at), node: victim.name })
    join(victim.pool, at + Math.floor(between(2, 10) * MIN), false)
  }
}
const alive = (n: Node, at: number) => n.from <= at && at < n.to
const someNode = (pool: string | undefined, at: number): Node | undefined => {
  for (let tries = 0; tries < 20; tries++) {
    const n = pick(nodes)
    if ((pool === undefined || n.pool === pool) && alive(n, at)) return n
  }
  return undefined
}
const anyTime = () => T0 + Math.floor(rand() * DAYS * DAY)
const gpuNodes = nodes.filter((n) => n.pool === "gpu").length
for (let k = 0; k < count(NODES * 0.004 * DAYS); k++) {
  const at = anyTime()
  const n = someNode(undefined, at)
  if (n === undefined) continue
  const [type, reason] = pick(FAULTS)
  episode(n, at, Number.POSITIVE_INFINITY, type, "False", reason)
}
for (let k = 0; k < count(gpuNodes * 0.015 * DAYS); k++) {
  const at = anyTime()
  const n = someNode("gpu", at)
  if (n !== undefined)
    episode(n, at, Number.POSITIVE_INFINITY, "AcceleratedHardwareReady", "False", pick(GPU_FAULTS))
}
for (let k = 0; k < count(NODES * 0.3 * (DAYS / 7)); k++) {
  const at = anyTime()
  const n = someNode(undefined, at)
  if (n !== undefined) episode(n, at, between(1, 8) * MIN, "Ready", "Unknown", "NodeStatusUnknown")
}
for (let k = 0; k < count(NODES * 0.1 * (DAYS / 7)); k++) {
  const at = anyTime()
  const n = someNode(undefined, at)
  if (n === undefined) continue
  const [type, reason] = pick(FLAPPY)
  episode(n, at, between(2, 25) * MIN, type, "False", reason)
}
for (let k = 0; k < count(NODES * 0.02 * (DAYS / 7)); k++) {
  const at = anyTime()
  const n = someNode(undefined, at)
  if (n === undefined) continue
  const [type, reason] = pick(FLAPPY)
  episode(n, at, between(35, 120) * MIN, type, "False", reason)
}
// The bad pool's broken image, on day 3 (or the middle of a shorter recording).
const badAt = T0 + Math.min(2, Math.floor(DAYS / 2)) * DAY + 10 * 60 * MIN
for (const n of nodes.filter((x) => x.pool === "bad" && alive(x, badAt)))
  if (rand() < 0.45)
    episode(
      n,
      badAt + Math.floor(rand() * 120 * MIN),
      Number.POSITIVE_INFINITY,
      "ContainerRuntimeReady",
      "False",
      "ContainerRuntimeUnhealthy"
    )
lines.push({ v: 1, kind: "mark", at: isoTime(END), mark: "end" })

lines.sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
writeFileSync(out, `${lines.map(historyLine).join("\n")}\n`)
process.stderr.write(`${out}: ${lines.length} lines, ${serial} nodes over ${DAYS} days\n`)
