/**
 * Idle footprint of the agent with every monitor on, against the real local cluster and the real host
 * root `/` of this machine.
 *
 *   node --conditions=source bench/idle.ts [windowSeconds=120] [scheduleSeconds=60] [warmupSeconds=15]
 *
 * Phase 1, default intervals: RSS and CPU of the agent process over `windowSeconds` after the warm-up.
 * Phase 2, every periodic check at a 1 s interval for `scheduleSeconds`: from the scheduler's debug log,
 * the smallest gap between the end of one check run and the start of the next. A gap >= 10 ms means no
 * 10 ms window ever holds more than one check.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CHECK_NAMES } from "../src/checks/names.ts"
import {
  AGENT_NODE_FLAGS,
  buildBundle,
  createKwokNode,
  makeClients,
  processUsage,
  sleep,
  agentArgs,
  spawnAgent
} from "./agent-harness.ts"

const windowSeconds = Number(process.argv[2] ?? 120)
const scheduleSeconds = Number(process.argv[3] ?? 60)
const warmupSeconds = Number(process.argv[4] ?? 15)
buildBundle()
const { core } = makeClients()
const node = `bench-idle-${Date.now().toString(36)}`
await createKwokNode(core, node)
const dir = mkdtempSync(join(tmpdir(), "nodemend-bench-"))

try {
  // Phase 1: defaults.
  const agent = spawnAgent(agentArgs(node, "/"))
  await sleep(warmupSeconds * 1000)
  const pid = agent.child.pid!
  const u0 = processUsage(pid)
  const t0 = performance.now()
  let maxRss = u0.rssBytes
  while (performance.now() - t0 < windowSeconds * 1000) {
    await sleep(1000)
    maxRss = Math.max(maxRss, processUsage(pid).rssBytes)
  }
  const u1 = processUsage(pid)
  const seconds = (performance.now() - t0) / 1000
  const mcpu = ((u1.cpuSeconds - u0.cpuSeconds) / seconds) * 1000
  await agent.stop()
  console.log(
    `idle window: ${seconds.toFixed(0)} s after ${warmupSeconds} s warm-up, default intervals, all monitors on, node flags: ${AGENT_NODE_FLAGS.join(" ") || "(none)"}`
  )
  console.log(
    `RSS: ${(u1.rssBytes / 2 ** 20).toFixed(1)} MiB at end, ${(maxRss / 2 ** 20).toFixed(1)} MiB max (goal <= 60 MiB)`
  )
  console.log(`CPU: ${mcpu.toFixed(2)} mCPU average (goal <= 2 mCPU)`)

  // Phase 2: every check at 1 s, spacing from the scheduler's own log.
  const config = join(dir, "fast.yaml")
  writeFileSync(config, `checks:\n${CHECK_NAMES.map((n) => `  ${n}: { intervalSeconds: 1 }`).join("\n")}\n`)
  const fast = spawnAgent(agentArgs(node, "/", ["--config", config, "--log-level", "Debug"]))
  await sleep(scheduleSeconds * 1000)
  await fast.stop()
  const runs = fast
    .output()
    .split("\n")
    .filter((l) => l.includes('"check run"'))
    .map(
      (l) =>
        (JSON.parse(l) as { message: [string, { check: string; startMs: number; endMs: number }] }).message[1]
    )
    .sort((a, b) => a.startMs - b.startMs)
  let minGap = Number.POSITIVE_INFINITY
  let overlaps = 0
  for (let i = 1; i < runs.length; i++) {
    const gap = runs[i]!.startMs - runs[i - 1]!.endMs
    minGap = Math.min(minGap, gap)
    if (gap < 10) overlaps++
  }
  const longest = Math.max(...runs.map((r) => r.endMs - r.startMs))
  console.log(
    `scheduling: ${runs.length} check runs of ${CHECK_NAMES.length} checks at 1 s over ${scheduleSeconds} s; ` +
      `smallest gap between runs ${minGap} ms; 10 ms windows with two checks: ${overlaps}; longest run ${longest} ms`
  )
} finally {
  await core.deleteNode({ name: node }).catch(() => undefined)
}
