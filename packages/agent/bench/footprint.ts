/**
 * Resident memory of the shipped agent under different V8 flag sets, one agent at a time, all monitors
 * on, host root `/` of this machine, against the local cluster.
 *
 *   node --conditions=source bench/footprint.ts [seconds=30] ["<flags>"]...
 *
 * Each variant runs `seconds`, then prints its RSS (VmRSS), peak RSS (VmHWM) and the CPU it used. A
 * variant's `NAME=value` words are environment variables (MALLOC_ARENA_MAX=2). A variant "source" runs src/main.ts under type stripping (with the deployed flags less --lite-mode) for comparison.
 * Without variants: the deployed flags, no flags, and source.
 */
import { readFileSync } from "node:fs"
import {
  buildBundle,
  createKwokNode,
  DEPLOYED_NODE_FLAGS,
  makeClients,
  processUsage,
  sleep,
  agentArgs,
  spawnAgent
} from "./agent-harness.ts"

const seconds = Number(process.argv[2] ?? 30)
const variants = process.argv.length > 3 ? process.argv.slice(3) : [DEPLOYED_NODE_FLAGS, "", "source"]
buildBundle()
const { core } = makeClients()
const node = `bench-footprint-${Date.now().toString(36)}`
await createKwokNode(core, node)
const mib = (b: number) => (b / 2 ** 20).toFixed(1)

try {
  console.log(`| Flags | RSS after ${seconds} s | peak RSS | CPU over the run |`)
  console.log("|---|---|---|---|")
  for (const variant of variants) {
    const fromSource = variant === "source"
    const words = (fromSource ? DEPLOYED_NODE_FLAGS : variant).split(" ").filter((f) => f !== "")
    const isEnv = (w: string) => /^[A-Z_]+=/.test(w)
    const flags = words.filter((w) => !isEnv(w))
    const env = Object.fromEntries(
      words.filter(isEnv).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)])
    )
    const agent = spawnAgent(agentArgs(node, "/"), { flags, fromSource, env })
    await sleep(seconds * 1000)
    const pid = agent.child.pid!
    const usage = processUsage(pid)
    const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1])
    await agent.stop()
    console.log(
      `| ${fromSource ? `source (${DEPLOYED_NODE_FLAGS})` : variant || "(none)"} | ${mib(usage.rssBytes)} MiB | ${mib(hwmKb * 1024)} MiB | ${(usage.cpuSeconds * 1000).toFixed(0)} ms |`
    )
  }
} finally {
  await core.deleteNode({ name: node }).catch(() => undefined)
}
