/**
 * Resident memory of the shipped agent under different V8 flag sets and environments, one agent at a time,
 * all monitors on, host root `/` of this machine, against the local cluster.
 *
 *   node --conditions=source bench/footprint.ts [seconds=30] ["<flags> [NAME=value]... [-env]"]...
 *
 * Each variant runs `seconds`, then prints its RSS (VmRSS) with its anonymous and file-backed parts, the
 * peak (VmHWM) and the CPU it used. A variant starts from the DaemonSet's environment (deploy/agent:
 * UV_THREADPOOL_SIZE, glibc malloc tuning); its `NAME=value` words add to or replace it, `-env` drops it.
 * A variant "source" runs src/main.ts under type stripping with the deployed flags (less --lite-mode).
 * Without variants: deployed, deployed flags without the deployed environment, no flags, and source.
 */
import { readFileSync } from "node:fs"
import {
  agentArgs,
  buildBundle,
  createKwokNode,
  DEPLOYED_NODE_FLAGS,
  makeClients,
  processUsage,
  sleep,
  spawnAgent
} from "./agent-harness.ts"
import { DEPLOYED_ENV } from "../test/integration/agent-process.ts"

const seconds = Number(process.argv[2] ?? 30)
const variants =
  process.argv.length > 3
    ? process.argv.slice(3)
    : [DEPLOYED_NODE_FLAGS, `${DEPLOYED_NODE_FLAGS} -env`, "", "source"]
buildBundle()
const { core } = makeClients()
const node = `bench-footprint-${Date.now().toString(36)}`
await createKwokNode(core, node)
const mib = (b: number) => (b / 2 ** 20).toFixed(1)
const deployedEnv = Object.entries(DEPLOYED_ENV)
  .map(([k, v]) => `${k}=${v}`)
  .join(" ")

try {
  console.log(`deployed environment: ${deployedEnv || "(none)"}`)
  console.log(`| Variant | RSS after ${seconds} s (anonymous + file-backed) | peak RSS | CPU over the run |`)
  console.log("|---|---|---|---|")
  for (const variant of variants) {
    const fromSource = variant === "source"
    const words = (fromSource ? DEPLOYED_NODE_FLAGS : variant).split(" ").filter((f) => f !== "")
    const isEnv = (w: string) => /^[A-Z_]+=/.test(w)
    const flags = words.filter((w) => !isEnv(w) && w !== "-env")
    const env = {
      ...(words.includes("-env") ? {} : DEPLOYED_ENV),
      ...Object.fromEntries(
        words.filter(isEnv).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)])
      )
    }
    const agent = spawnAgent(agentArgs(node, "/"), { flags, fromSource, env })
    await sleep(seconds * 1000)
    const pid = agent.child.pid!
    const usage = processUsage(pid)
    const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1])
    await agent.stop()
    console.log(
      `| ${fromSource ? `source (${DEPLOYED_NODE_FLAGS})` : variant || "(none)"} | ${mib(usage.rssBytes)} MiB (${mib(usage.anonBytes)} + ${mib(usage.fileBytes)}) | ${mib(hwmKb * 1024)} MiB | ${(usage.cpuSeconds * 1000).toFixed(0)} ms |`
    )
  }
} finally {
  await core.deleteNode({ name: node }).catch(() => undefined)
}
