/**
 * The side-by-side per log source (issue #27), `side-by-side.ts sources ...`: for each source node-problem-detector
 * (NPD) has (kmsg, journal, file; source-inputs.ts says how each is fed and which of NPD's monitors reads it) and
 * each input (benign chatter; the same with 1% fault lines), one kwok Node with NPD and the shipped agent on it,
 * started fresh, reading the same lines at the same time; the whole input is appended at once (the journal: one
 * journal file renamed into the journal directory) and each one's end is timed from that append: NPD's when its
 * `problem_counter` counts the end marker (a bench rule added to its config), the agent's when
 * `nodemend_agent_log_lines_read_total` of the source has grown by every line. Per side: lines/s end to end,
 * findings (agent: `nodemend_agent_findings_total`) or problems (NPD: `problem_counter`, less the marker), CPU
 * seconds from the append to its end, and peak RSS (VmHWM; the agent's includes its journalctl child). The agent
 * runs its default config (all monitors), as in the kernel-only mode's throughput phase.
 *
 *   ./node_modules/.bin/node --conditions=source bench/npd/side-by-side.ts sources [lines=50000] [journalLines=20000]
 *     [runs=2] [only=<source>:<input>...]
 */
import { mkdirSync, readFileSync, renameSync, appendFileSync, writeFileSync } from "node:fs"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import type { CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import {
  agentArgs,
  buildBundle,
  createKwokNode,
  kubeconfigPath,
  makeClients,
  sleep,
  spawnAgent
} from "../../packages/agent/bench/agent-harness.ts"
import { JOURNAL_REMOTE, makeFakeHost } from "../../packages/agent/test/integration/agent-process.ts"
import { build, npdConfigDir } from "./build.mjs"
import { spawnNpd, sumMetric, treeUsage } from "./npd-process.ts"
import {
  AGENT_SOURCE,
  END_REASON,
  IPAMD_LOG,
  inputTexts,
  ipamdLines,
  npdConfig,
  type NpdMonitorConfig,
  type SourceKind
} from "./source-inputs.ts"

type Input = "chatter" | "storm"
interface Side {
  readonly seconds: number | undefined
  readonly reported: number
  readonly cpuSeconds: number
  readonly peakRssMiB: number
}

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
const shipped = (name: string): NpdMonitorConfig =>
  JSON.parse(readFileSync(join(npdConfigDir(), name), "utf8")) as NpdMonitorConfig

/** `Dec  1 16:20:00` (NPD filelog's timestampFormat `Jan _2 15:04:05`, local time). */
const syslogTime = (d: Date) => {
  const mon = d.toLocaleString("en-US", { month: "short" })
  const p = (n: number) => String(n).padStart(2, "0")
  return `${mon} ${String(d.getDate()).padStart(2, " ")} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

/** The input, framed for each reader and written where it will be appended from (before the clock starts). */
const stage = (kind: SourceKind, root: string, texts: readonly string[]): (() => void) => {
  const now = new Date()
  if (kind === "kmsg") {
    // records stamped now (the fake host's boot time + monotonic usec): the agent skips records older than its start
    const usec = 3_600_000_000 + 60_000_000
    const kmsg = texts.map((t, i) => `6,${1_000_000 + i},${usec},-;${t}\n`).join("")
    const stamp = syslogTime(now)
    const kern = texts
      .map((t, i) => `${stamp} bench kernel: [${(3600 + i / 1e6).toFixed(6)}] ${t}\n`)
      .join("")
    return () => {
      appendFileSync(join(root, "dev/kmsg"), kmsg)
      appendFileSync(join(root, "var/log/kern.log"), kern)
    }
  }
  if (kind === "file") {
    const body = `${ipamdLines(texts).join("\n")}\n`
    return () => appendFileSync(join(root, IPAMD_LOG), body)
  }
  if (JOURNAL_REMOTE === undefined) throw new Error("systemd-journal-remote is not installed")
  // Stamped a minute ahead: the agent starts journalctl at its own start time, NPD seeks to now - lookback.
  const us = BigInt(now.getTime() + 60_000) * 1000n
  const text = texts
    .map((m, i) =>
      [
        `__REALTIME_TIMESTAMP=${us + BigInt(i)}`,
        `__MONOTONIC_TIMESTAMP=${1000 + i}`,
        "_BOOT_ID=0123456789abcdef0123456789abcdef",
        "SYSLOG_IDENTIFIER=systemd",
        `MESSAGE=${m}`,
        ""
      ].join("\n")
    )
    .join("\n")
  const staged = join(root, "staging.journal")
  execFileSync(JOURNAL_REMOTE, [`--output=${staged}`, "-"], {
    input: `${text}\n`,
    stdio: ["pipe", "ignore", "ignore"],
    maxBuffer: 1 << 30
  })
  return () => renameSync(staged, join(root, "var/log/journal/input.journal"))
}

const measure = async (
  env: { npd: string; kc: KubeConfig; core: CoreV1Api },
  kind: SourceKind,
  input: Input,
  n: number
): Promise<{ npd: Side; agent: Side }> => {
  const node = `npd-src-${kind}-${input}-${Date.now().toString(36)}`
  await createKwokNode(env.core, node)
  const host = makeFakeHost("b3c10000-0000-4000-8000-000000000002")
  const paths = {
    kernLog: join(host.root, "var/log/kern.log"),
    journalDir: join(host.root, "var/log/journal"),
    ipamdLog: join(host.root, IPAMD_LOG)
  }
  mkdirSync(join(host.root, "var/log/aws-routed-eni"), { recursive: true })
  writeFileSync(paths.kernLog, "")
  writeFileSync(paths.ipamdLog, "")
  const config = npdConfig(kind, shipped, paths)
  const configPath = join(host.root, "npd-monitor.json")
  writeFileSync(configPath, JSON.stringify(config))
  const npd = await spawnNpd(env.npd, {
    node,
    server: env.kc.getCurrentCluster()!.server,
    kubeconfig: kubeconfigPath(),
    configs: [configPath]
  })
  const agentConfig = join(host.root, "agent.yaml")
  writeFileSync(agentConfig, "")
  const agent = spawnAgent(agentArgs(node, host.root, ["--config", agentConfig]))
  try {
    const append = stage(kind, host.root, inputTexts(kind, input, n, config))
    const endSeries = `problem_counter{reason="${END_REASON}"}`
    const readSeries = `nodemend_agent_log_lines_read_total{source="${AGENT_SOURCE[kind]}"}`
    const deadline = Date.now() + 120_000
    while (!(await npd.metrics()).includes(endSeries) || !agent.output().includes("log monitors")) {
      if (Date.now() > deadline)
        throw new Error(
          `not both up\nNPD:\n${npd.output().slice(-3000)}\nagent:\n${agent.output().slice(-3000)}`
        )
      await sleep(200)
    }
    await sleep(1000) // the agent's readers past their start
    const port = Number(/"port":(\d+)/.exec(agent.output())?.[1])
    const agentMetrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const pids = { npd: npd.proc.pid!, agent: agent.child.pid! }
    const a0 = await agentMetrics()
    const n0 = await npd.metrics()
    const cpu0 = { npd: treeUsage(pids.npd).cpuSeconds, agent: treeUsage(pids.agent).cpuSeconds }
    const t0 = performance.now()
    append()
    const done: { npd?: number; agent?: number } = {}
    const cpu: { npd?: number; agent?: number } = {}
    const end = Date.now() + 300_000
    while ((done.npd === undefined || done.agent === undefined) && Date.now() < end) {
      if (done.npd === undefined && sumMetric(await npd.metrics(), endSeries) >= 1) {
        done.npd = performance.now()
        cpu.npd = treeUsage(pids.npd).cpuSeconds
      }
      if (
        done.agent === undefined &&
        sumMetric(await agentMetrics(), readSeries) - sumMetric(a0, readSeries) >= n + 1
      ) {
        done.agent = performance.now()
        cpu.agent = treeUsage(pids.agent).cpuSeconds
      }
      await sleep(50)
    }
    await sleep(500) // findings of the last lines
    const side = (k: "npd" | "agent", reported: number): Side => ({
      seconds: done[k] === undefined ? undefined : (done[k] - t0) / 1000,
      reported,
      cpuSeconds: (cpu[k] ?? treeUsage(pids[k]).cpuSeconds) - cpu0[k],
      peakRssMiB: treeUsage(pids[k]).peakRssMiB
    })
    const findings = "nodemend_agent_findings_total"
    return {
      npd: side(
        "npd",
        sumMetric(await npd.metrics(), "problem_counter") - sumMetric(n0, "problem_counter") - 1
      ),
      agent: side("agent", sumMetric(await agentMetrics(), findings) - sumMetric(a0, findings))
    }
  } finally {
    npd.stop()
    await agent.stop()
    host.cleanup()
    await env.core.deleteNode({ name: node }).catch(() => undefined)
  }
}

const fmt = (s: Side, lines: number) =>
  `${
    s.seconds === undefined
      ? "did not finish".padStart(20)
      : `${Math.round(lines / s.seconds)
          .toLocaleString("en")
          .padStart(8)} (${s.seconds.toFixed(1).padStart(5)} s)`.padStart(20)
  } ${String(s.reported).padStart(6)} ${s.cpuSeconds.toFixed(1).padStart(6)} ${s.peakRssMiB.toFixed(1).padStart(7)}`

export const runSourceRates = async (args: readonly string[]): Promise<void> => {
  const lines = Number(args[0] ?? 50_000)
  const journalLines = Number(args[1] ?? 20_000)
  const runs = Number(args[2] ?? 2)
  const only = args.slice(3)
  const npd = await build()
  buildBundle()
  const { kc, core } = makeClients()
  console.log(
    `per-source side-by-side: ${lines} lines (journal ${journalLines}) + an end marker per input, ${runs} runs; NPD v1.36.0 (journald build) and the agent's bundle with its deployed flags; pod logs: NPD has no pod-log source, not compared`
  )
  const head = `${"lines/s (s)".padStart(20)} ${"found".padStart(6)} ${"CPU s".padStart(6)} ${"RSS MiB".padStart(7)}`
  console.log(`${"run source  input  ".padEnd(23)}| NPD ${head} | agent ${head} | load`)
  for (let run = 1; run <= runs; run++)
    for (const kind of ["kmsg", "journal", "file"] as const)
      for (const input of ["chatter", "storm"] as const) {
        if (only.length > 0 && !only.includes(`${kind}:${input}`)) continue
        const n = kind === "journal" ? journalLines : lines
        const loadBefore = load()
        const r = await measure({ npd, kc, core }, kind, input, n)
        console.log(
          `${String(run).padEnd(3)} ${kind.padEnd(7)} ${input.padEnd(7)}    | NPD ${fmt(r.npd, n + 1)} | agent ${fmt(r.agent, n + 1)} | ${loadBefore} -> ${load()}`
        )
      }
}
