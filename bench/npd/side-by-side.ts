/**
 * node-problem-detector and nodemend-agent side by side (issue #20), one run each, on the same kwok Node of
 * the local cluster, fed the same kernel lines:
 *   1. fault line written -> Event visible through a watch (p50 / max over `faults` hung-task lines, which
 *      both rule sets know: NPD's TaskHung, the agent's AppBlocked);
 *   2. lines/s through each one's rule engine on the same mixed log (packages/agent/bench/mixed-kernel-log.ts:
 *      node chatter with 1% cited fault lines, as bench/rules-throughput.ts), and the detections each counted
 *      (NPD: problem_counter; the agent: nodemend_agent_findings_total);
 *   3. idle RSS and CPU over `idleMinutes`.
 * The same lines, framed for each: /dev/kmsg records for the agent (the host root's dev/kmsg is a regular
 * file, which the agent tails), a syslog kern.log for NPD, whose kmsg plugin reads only the real
 * /dev/kmsg: NPD runs its shipped kernel monitor rules (config/kernel-monitor.json) through the filelog
 * plugin with the settings of its shipped kernel-monitor-filelog.json. Latency and throughput: the agent
 * with its default config (all its rules); idle, comparable monitors: NPD's kernel monitor, the agent with
 * only its kernel monitor on (its kernel rules plus its kernel periodic checks).
 * Fresh processes per phase (both throttle Events: NPD's client-go recorder, the agent's budget).
 *
 * Run: ./node_modules/.bin/node --conditions=source bench/npd/side-by-side.ts [faults=20] [lines=200000] [idleMinutes=10]
 * (builds NPD with bench/npd/build.mjs and the agent's bundle first). Per log source instead (kmsg, journal, file,
 * with and without a 1% fault storm): `side-by-side.ts sources ...`, source-rates.ts.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Watch } from "@kubernetes/client-node"
import {
  agentArgs,
  buildBundle,
  createKwokNode,
  kubeconfigPath,
  makeClients,
  percentile,
  processUsage,
  sleep,
  spawnAgent
} from "../../packages/agent/bench/agent-harness.ts"
import { makeFakeHost } from "../../packages/agent/test/integration/agent-process.ts"
import { mixedKernelLog } from "../../packages/agent/bench/mixed-kernel-log.ts"
import { build, npdConfigDir } from "./build.mjs"
import { type NpdProcess, spawnNpd, sumMetric as sum } from "./npd-process.ts"
import { runSourceRates } from "./source-rates.ts"

if (process.argv[2] === "sources") {
  await runSourceRates(process.argv.slice(3))
  process.exit(0)
}

const faults = Number(process.argv[2] ?? 20)
const lines = Number(process.argv[3] ?? 200_000)
const idleMinutes = Number(process.argv[4] ?? 10)

const npd = await build()
buildBundle() // the shipped agent, as deployed (AGENT_FROM_SOURCE=1 runs src/main.ts instead)
const { kc, core } = makeClients()
/** Latency and throughput: the agent with its own rules (every monitor); idle: only its kernel monitor, like NPD's. */
const KERNEL_ONLY = `monitors:
  container-runtime: { enabled: false }
  networking: { enabled: false }
  storage: { enabled: false }
  nvidia: { enabled: false }
  neuron: { enabled: false }
`

/** `Dec  1 16:20:00` (NPD filelog's timestampFormat `Jan _2 15:04:05`, local time). */
const syslogTime = (d = new Date()) => {
  const mon = d.toLocaleString("en-US", { month: "short" })
  const p = (n: number) => String(n).padStart(2, "0")
  return `${mon} ${String(d.getDate()).padStart(2, " ")} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}
let uptimeUs = 1_000_000
const kernLine = (text: string) => {
  uptimeUs += 1000
  return `${syslogTime()} bench kernel: [${(uptimeUs / 1e6).toFixed(6)}] ${text}\n`
}

interface Pair {
  readonly node: string
  readonly host: ReturnType<typeof makeFakeHost>
  readonly kernLog: string
  readonly agent: ReturnType<typeof spawnAgent>
  readonly npd: NpdProcess
  /** Writes one kernel line to both. */
  write(text: string): void
  /** Writes many lines to both, each in one append. */
  writeMany(texts: readonly string[]): void
  agentMetrics(): Promise<string>
  close(): Promise<void>
}

const startPair = async (phase: string, agentConfigText = ""): Promise<Pair> => {
  const node = `npd-bench-${phase}-${Date.now().toString(36)}`
  await createKwokNode(core, node)
  const host = makeFakeHost("b3c10000-0000-4000-8000-000000000001")
  const bootedAt = Date.now() - 3600_000 // makeFakeHost's btime
  const kernLog = join(host.root, "var/log/kern.log")
  mkdirSync(join(host.root, "var/log"), { recursive: true })
  writeFileSync(kernLog, "")
  // NPD: the shipped kernel-monitor.json rules, read through the filelog plugin as kernel-monitor-filelog.json does
  const shipped = JSON.parse(readFileSync(join(npdConfigDir(), "kernel-monitor.json"), "utf8"))
  const filelog = JSON.parse(readFileSync(join(npdConfigDir(), "kernel-monitor-filelog.json"), "utf8"))
  const npdConfig = join(host.root, "npd-kernel-monitor.json")
  writeFileSync(
    npdConfig,
    JSON.stringify({ ...shipped, plugin: "filelog", pluginConfig: filelog.pluginConfig, logPath: kernLog })
  )
  const proc = await spawnNpd(npd, {
    node,
    server: kc.getCurrentCluster()!.server,
    kubeconfig: kubeconfigPath(),
    configs: [npdConfig]
  })
  const agentConfig = join(host.root, "agent.yaml")
  writeFileSync(agentConfig, agentConfigText)
  const agent = spawnAgent(agentArgs(node, host.root, ["--config", agentConfig]))
  // both are up when their first conditions are on the Node
  const deadline = Date.now() + 120_000
  for (;;) {
    const conds = (await core.readNode({ name: node })).status?.conditions ?? []
    const types = new Set(conds.map((c) => c.type))
    if (types.has("KernelDeadlock") && types.has("KernelReady") && agent.output().includes("log monitors"))
      break
    if (Date.now() > deadline)
      throw new Error(
        `not both up: ${[...types]}\nNPD:\n${proc.output().slice(-3000)}\nagent:\n${agent.output().slice(-3000)}`
      )
    await sleep(200)
  }
  const healthPort = Number(
    /"port":(\d+)/.exec(agent.output())?.[1] ?? /port: (\d+)/.exec(agent.output())?.[1]
  )
  return {
    node,
    host,
    kernLog,
    agent,
    npd: proc,
    write: (text) => {
      host.appendKmsg(text)
      appendFileSync(kernLog, kernLine(text))
    },
    writeMany: (texts) => {
      const kmsg = join(host.root, "dev/kmsg")
      let seq = 1_000_000
      // records stamped now (boot time + monotonic usec): the agent skips records older than its start
      const usec = (Date.now() - bootedAt + 1000) * 1000
      appendFileSync(kmsg, texts.map((t) => `6,${seq++},${usec},-;${t}\n`).join(""))
      appendFileSync(kernLog, texts.map(kernLine).join(""))
    },
    agentMetrics: async () => (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text(),
    close: async () => {
      proc.stop()
      await agent.stop()
      host.cleanup()
      await core.deleteNode({ name: node }).catch(() => undefined)
    }
  }
}

/** Core/v1 Events about the Node, as a watch delivers them, with the time each arrived. */
const watchEvents = async (node: string) => {
  const seen: { reason: string; message: string; at: number }[] = []
  const req = await new Watch(kc).watch(
    "/api/v1/namespaces/default/events",
    { fieldSelector: `involvedObject.name=${node}` },
    (_type, ev: { reason?: string; message?: string }) =>
      seen.push({ reason: ev.reason ?? "", message: ev.message ?? "", at: performance.now() }),
    () => undefined
  )
  return { seen, stop: () => req.abort() }
}

// ---------------------------------------------------------------- 1. latency
{
  const p = await startPair("latency")
  const w = await watchEvents(p.node)
  const npdMs: number[] = []
  const agentMs: number[] = []
  for (let i = 0; i < faults; i++) {
    const task = `benchtask${i}`
    const written = performance.now()
    p.write(`task ${task}:${4000 + i} blocked for more than 120 seconds.`)
    const deadline = Date.now() + 30_000
    let n: number | undefined
    let a: number | undefined
    while ((n === undefined || a === undefined) && Date.now() < deadline) {
      n ??= w.seen.find((e) => e.reason === "TaskHung" && e.message.includes(task))?.at
      a ??= w.seen.find((e) => e.reason === "AppBlocked" && e.message.includes(task))?.at
      await sleep(5)
    }
    if (n !== undefined) npdMs.push(n - written)
    if (a !== undefined) agentMs.push(a - written)
    await sleep(500)
  }
  w.stop()
  await p.close()
  const fmt = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y)
    return `n=${s.length}/${faults} p50=${percentile(s, 50).toFixed(0)} ms p99=${percentile(s, 99).toFixed(0)} ms max=${s.at(-1)?.toFixed(0)} ms`
  }
  console.log(`latency (line written -> Event through a watch): NPD ${fmt(npdMs)}; agent ${fmt(agentMs)}`)
}

// ---------------------------------------------------------------- 2. throughput and detections
{
  const mixed = mixedKernelLog(lines, 0.01)
  const marker = "unregister_netdevice: waiting for benchmarker to become free. Usage count = 1"
  // NPD has read everything when its UnregisterNetDevice count reaches the marker's: the cited fault lines include
  // unregister_netdevice lines too (issue #27), so count those NPD's own pattern (end-anchored) matches.
  const npdUnregister = /unregister_netdevice: waiting for \w+ to become free. Usage count = \d+$/
  const npdMarkerCount = mixed.filter((l) => npdUnregister.test(l)).length + 1
  const p = await startPair("throughput")
  const agentRead0 = sum(await p.agentMetrics(), 'nodemend_agent_log_lines_read_total{source="dmesg"}')
  const t0 = performance.now()
  p.writeMany([...mixed, marker])
  let npdDone: number | undefined
  let agentDone: number | undefined
  const deadline = Date.now() + 600_000
  while ((npdDone === undefined || agentDone === undefined) && Date.now() < deadline) {
    if (npdDone === undefined) {
      const m = await p.npd.metrics()
      if (sum(m, 'problem_counter{reason="UnregisterNetDevice"}') >= npdMarkerCount)
        npdDone = performance.now()
    }
    if (agentDone === undefined) {
      const m = await p.agentMetrics()
      if (sum(m, 'nodemend_agent_log_lines_read_total{source="dmesg"}') - agentRead0 >= lines + 1)
        agentDone = performance.now()
    }
    await sleep(50)
  }
  const npdM = await p.npd.metrics()
  const agentM = await p.agentMetrics()
  const npdDetections = sum(npdM, "problem_counter") - 1
  const agentDetections = sum(agentM, "nodemend_agent_findings_total")
  const rate = (done: number | undefined) =>
    done === undefined
      ? "did not finish"
      : `${Math.round((lines + 1) / ((done - t0) / 1000))} lines/s (${((done - t0) / 1000).toFixed(1)} s)`
  console.log(
    `throughput on ${lines} mixed kernel lines (1% faults): NPD ${rate(npdDone)}, ${npdDetections} detections; agent ${rate(agentDone)}, ${agentDetections} detections`
  )
  const byReason = (m: string, name: string, label: string) =>
    m
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`) && !l.endsWith(" 0"))
      .map((l) => `${new RegExp(`${label}="([^"]+)"`).exec(l)?.[1]}=${l.slice(l.lastIndexOf(" ") + 1)}`)
      .join(" ")
  console.log(`  NPD by reason: ${byReason(npdM, "problem_counter", "reason")}`)
  console.log(`  agent by reason: ${byReason(agentM, "nodemend_agent_findings_total", "reason")}`)
  await p.close()
}

// ---------------------------------------------------------------- 3. idle footprint
{
  const p = await startPair("idle", KERNEL_ONLY)
  await sleep(10_000) // past start-up
  const pids = { npd: p.npd.proc.pid!, agent: p.agent.child.pid! }
  const before = { npd: processUsage(pids.npd), agent: processUsage(pids.agent) }
  const maxRss = { npd: 0, agent: 0 }
  const end = Date.now() + idleMinutes * 60_000
  while (Date.now() < end) {
    for (const k of ["npd", "agent"] as const) maxRss[k] = Math.max(maxRss[k], processUsage(pids[k]).rssBytes)
    await sleep(5_000)
  }
  const after = { npd: processUsage(pids.npd), agent: processUsage(pids.agent) }
  for (const k of ["npd", "agent"] as const) {
    const cpu = after[k].cpuSeconds - before[k].cpuSeconds
    console.log(
      `idle ${idleMinutes} min ${k}: CPU ${cpu.toFixed(2)} s (${((cpu / (idleMinutes * 60)) * 100).toFixed(3)} %), RSS ${(after[k].rssBytes / 2 ** 20).toFixed(1)} MiB (max ${(maxRss[k] / 2 ** 20).toFixed(1)} MiB)`
    )
  }
  await p.close()
}
