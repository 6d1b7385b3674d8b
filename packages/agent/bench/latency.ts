/**
 * Detection latency, measured from the source: a fault line is appended to the node's kernel log and
 * the clock stops when the condition change arrives through a watch on the API server.
 *
 *   node --conditions=source bench/latency.ts [faults=250] [warmup=20]
 *
 * The real agent binary runs against the local cluster with a temporary host root whose dev/kmsg is a
 * regular file. Config promotes SoftLockup to a Condition, so each line `... stuck for <i>s!` changes
 * KernelReady's message; fault i is observed when a watch event carries `CPU stuck for <i>s`.
 * Faults are sequential: the next is written when the previous one was observed (plus 10 ms).
 */
import { Watch, type V1Node } from "@kubernetes/client-node"
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  buildBundle,
  createKwokNode,
  makeClients,
  percentile,
  sleep,
  agentArgs,
  spawnAgent
} from "./agent-harness.ts"

const faults = Number(process.argv[2] ?? 250)
const warmup = Number(process.argv[3] ?? 20)
buildBundle()
const { kc, core } = makeClients()
const node = `bench-latency-${Date.now().toString(36)}`
await createKwokNode(core, node)

const root = mkdtempSync(join(tmpdir(), "nodemend-latency-"))
const write = (rel: string, content: string) => {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  writeFileSync(join(root, rel), content)
}
write("proc/sys/kernel/random/boot_id", "0badcafe-0000-4000-8000-000000000001\n")
write("proc/stat", `btime ${Math.floor(Date.now() / 1000) - 3600}\n`)
write("proc/uptime", "3600.00 3600.00\n")
write("sys/class/net/lo/flags", "0x49\n")
write("dev/kmsg", "")
write("config.yaml", "monitors:\n  kernel:\n    reasons:\n      SoftLockup: { severity: Condition }\n")

const seen = new Map<number, number>()
let waiting: { i: number; resolve: () => void } | undefined
const watch = await new Watch(kc).watch(
  "/api/v1/nodes",
  { fieldSelector: `metadata.name=${node}`, allowWatchBookmarks: true, timeoutSeconds: 25 },
  (_type, obj: V1Node) => {
    const at = performance.now()
    const msg = obj.status?.conditions?.find((c) => c.type === "KernelReady")?.message ?? ""
    for (const m of msg.matchAll(/CPU stuck for (\d+)s/g)) {
      const i = Number(m[1])
      if (!seen.has(i)) seen.set(i, at)
    }
    if (waiting !== undefined && seen.has(waiting.i)) waiting.resolve()
  },
  () => undefined
)

const agent = spawnAgent(agentArgs(node, root, ["--config", join(root, "config.yaml")]))
try {
  for (let t = 0; ; t += 100) {
    const n = await core.readNode({ name: node })
    if (n.status?.conditions?.some((c) => c.type === "KernelReady")) break
    if (t > 30_000) throw new Error(`agent did not start:\n${agent.output()}`)
    await sleep(100)
  }
  await sleep(500)
  const latencies: number[] = []
  let seq = 0
  for (let i = 1; i <= faults + warmup; i++) {
    const observed = new Promise<void>((resolve) => {
      waiting = { i, resolve }
    })
    const t0 = performance.now()
    appendFileSync(
      join(root, "dev/kmsg"),
      `4,${++seq},${3600_000_000 + seq},-;watchdog: BUG: soft lockup - CPU#1 stuck for ${i}s! [bench:${i}]\n`
    )
    const timedOut = await Promise.race([observed.then(() => false), sleep(5000).then(() => true)])
    if (timedOut) throw new Error(`fault ${i} not observed within 5 s\n${agent.output().slice(-3000)}`)
    if (i > warmup) latencies.push(seen.get(i)! - t0)
    await sleep(10)
  }
  latencies.sort((a, b) => a - b)
  const f = (x: number) => `${x.toFixed(1)} ms`
  console.log(
    `faults: ${latencies.length} measured (after ${warmup} warm-up), kmsg line -> KernelReady change seen by a watch`
  )
  console.log(
    `p50 ${f(percentile(latencies, 50))}, p90 ${f(percentile(latencies, 90))}, p99 ${f(percentile(latencies, 99))}, max ${f(latencies.at(-1)!)} (goal p99 <= 50 ms)`
  )
} finally {
  await agent.stop()
  watch.abort()
  await core.deleteNode({ name: node }).catch(() => undefined)
}
