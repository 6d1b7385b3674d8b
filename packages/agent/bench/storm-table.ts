/**
 * Issue #39's storm table: the shipped agent (the bundle with the DaemonSet's V8 flags and environment, as
 * agent-log-throughput.ts runs it) on a kwok Node of the local cluster (.nodemend/kubeconfig or
 * NODEMEND_KUBECONFIG), a fresh agent and Node per row and run, N lines appended at once to one source:
 *
 *   storm P%   N lines, P% of them the storm's fault (1, 5, 20, 50, 100), then one line of a reason not raised yet
 *   distinct   a 20% storm with ten distinct faults spread inside it
 *   cross      a 100% storm, and ten distinct faults written on another source (kmsg; for kmsg: ipamd.log) one
 *              every 100 ms from the append on
 *
 * Columns: lines/s (append -> every line of the storm's source counted read); read -> Event: the worst of the
 * different faults, from the poll of /metrics that first counts its line read (polled every `pollMs`, so the
 * figure may be that much short) to its Event seen by a watch on the API server; written -> Event, from the append
 * (contract 4); delivered: the different faults with an Event within 20 s of the storm read; shed: repeats shed
 * (`nodemend_agent_log_findings_shed_total`) and, after "+", findings never tracked as news
 * (`..._dropped_total`); RSS before the append and peak (VmHWM, the fresh process's whole life).
 *
 *   cd packages/agent && node --conditions=source bench/storm-table.ts [lines=200000] [runs=2] [pollMs=25] [kind|row ...]
 *
 * e.g. `... 200000 2 25 kmsg file` for two sources, `... 200000 1 25 distinct cross` for two rows of every source;
 * STORM_TABLE_BUNDLE=<file> runs that build of the agent instead of the one built from the sources.
 */
import { execFileSync } from "node:child_process"
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { EventsV1Api, Watch } from "@kubernetes/client-node"
import { clients } from "@nodemend/cluster-harness"
import { type AgentNode, createAgentNode } from "../test/integration/agent-node.ts"
import {
  BUNDLE,
  buildBundle,
  DEPLOYED_ENV,
  DEPLOYED_NODE_FLAGS,
  JOURNAL_REMOTE,
  type RunningAgent,
  spawnNode
} from "../test/integration/agent-process.ts"
import {
  benchConfig,
  DISTINCT_REASONS,
  distinctFault,
  KINDS,
  type Kind,
  PATH,
  SOURCE,
  STORM_REASONS,
  stormLines
} from "./storm-inputs.ts"

const [lines, runs, pollMs] = [200_000, 2, 25].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number
]
const filters = process.argv.slice(5)
const ROWS = ["storm 1%", "storm 5%", "storm 20%", "storm 50%", "storm 100%", "distinct", "cross"] as const
type Row = (typeof ROWS)[number]
const BOOT = "6a1f0c2e-0000-4000-8000-000000039b39"
const DELIVERY_WAIT_MS = 20_000

process.env.NODEMEND_KUBECONFIG ??= new URL("../../../.nodemend/kubeconfig", import.meta.url).pathname
const { kc, core } = clients()
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The sum of a metric's series whose line starts with `prefix` and contains every one of `labels`. */
const sum = (metrics: string, prefix: string, ...labels: string[]) =>
  metrics
    .split("\n")
    .filter((l) => l.startsWith(prefix) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)
const readOf = (metrics: string, source: string) =>
  sum(metrics, `nodemend_agent_log_lines_read_total{source="${source}"`)

/** First time (performance.now) each reason's Event about the Node was seen by a watch. */
const watchEvents = async (nodeName: string) => {
  const seen = new Map<string, number>()
  const fieldSelector = `regarding.name=${nodeName}`
  const path = "/apis/events.k8s.io/v1/namespaces/default/events"
  const list = await kc
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace: "default", fieldSelector })
  const ctl = await new Watch(kc).watch(
    path,
    { fieldSelector, resourceVersion: list.metadata?.resourceVersion },
    (phase, obj: { reason?: string }) => {
      if (phase === "ADDED" && obj.reason !== undefined && !seen.has(obj.reason))
        seen.set(obj.reason, performance.now())
    },
    () => undefined
  )
  return { seen, stop: () => ctl.abort() }
}

/** The host-root files the readers tail exist at the agent's start (their content is history). */
const prepareHost = (node: AgentNode) => {
  node.host.write(
    PATH.file,
    `${JSON.stringify({ level: "info", ts: new Date().toISOString(), msg: "Starting" })}\n`
  )
  node.host.write(PATH.podlogs, `${new Date().toISOString()} stderr F I1101 starting kube-proxy\n`)
}

let kmsgSeq = 1_000
const kmsgBody = (texts: readonly string[]) =>
  texts.map((t) => `4,${++kmsgSeq},${3_600_000_000 + kmsgSeq},-;${t}\n`).join("")

/** Journal files of kubelet entries in staging/, stamped a minute ahead (journalctl starts at the reader's start time). */
const stageJournal = (root: string, messages: readonly string[]): string => {
  if (JOURNAL_REMOTE === undefined) throw new Error("systemd-journal-remote is not installed")
  const us = BigInt(Date.now() + 60_000) * 1000n
  const text = messages
    .map((m, i) =>
      [
        `__REALTIME_TIMESTAMP=${us + BigInt(i)}`,
        `__MONOTONIC_TIMESTAMP=${1000 + i}`,
        `_BOOT_ID=${BOOT.replace(/-/g, "")}`,
        "SYSLOG_IDENTIFIER=kubelet",
        `MESSAGE=${m}`,
        ""
      ].join("\n")
    )
    .join("\n")
  const staged = join(root, "staging")
  mkdirSync(staged, { recursive: true })
  execFileSync(JOURNAL_REMOTE, [`--output=${join(staged, "storm.journal")}`, "-"], {
    input: `${text}\n`,
    stdio: ["pipe", "ignore", "ignore"],
    maxBuffer: 1 << 30
  })
  return staged
}

/** Appends `texts` to `kind`'s source at once (the journal's: `staged`, renamed into the journal directory). */
const append = (root: string, kind: Kind, texts: readonly string[], staged?: string) => {
  // systemd-journal-remote rotates a large output (storm@....journal, then storm.journal): every file goes in,
  // the archived ones first (journalctl --follow does not go back to a file older than where it is).
  if (kind === "journal")
    for (const f of readdirSync(staged!).sort((a, b) => Number(!a.includes("@")) - Number(!b.includes("@"))))
      renameSync(join(staged!, f), join(root, "var/log/journal", f))
  else appendFileSync(join(root, PATH[kind]), kind === "kmsg" ? kmsgBody(texts) : `${texts.join("\n")}\n`)
}

interface Fault {
  readonly reason: string
  readonly kind: Kind
  /** Its line's position among the lines appended to its source after read0 (1-based count). */
  readonly count: number
  writtenAt: number
  readAt?: number
}

interface Result {
  readonly linesPerSec: number
  readonly readToEvent: readonly number[]
  readonly writtenToEvent: readonly number[]
  readonly delivered: number
  readonly expected: number
  readonly missing: readonly string[]
  readonly shed: number
  readonly dropped: number
  readonly rssBefore: number
  readonly rssPeak: number
  readonly load: string
}

/** The storm's lines and the different faults of a row. */
const plan = (kind: Kind, row: Row) => {
  const percent = row === "distinct" ? 20 : row === "cross" ? 100 : Number(/(\d+)%/.exec(row)![1])
  const inside = new Map<number, string>()
  const faults: Omit<Fault, "writtenAt">[] = []
  if (row === "distinct")
    DISTINCT_REASONS.forEach((reason, k) => {
      const at = Math.floor(((k + 0.5) * lines) / DISTINCT_REASONS.length)
      inside.set(at, distinctFault(kind, k))
      faults.push({ reason, kind, count: at + 1 })
    })
  const texts = stormLines(kind, lines, percent, inside)
  if (row.startsWith("storm")) {
    texts.push(distinctFault(kind, 0))
    faults.push({ reason: DISTINCT_REASONS[0], kind, count: texts.length })
  }
  const other: Kind = kind === "kmsg" ? "file" : "kmsg"
  if (row === "cross")
    DISTINCT_REASONS.forEach((reason, k) => {
      faults.push({ reason, kind: other, count: k + 1 })
    })
  return { texts, faults, other }
}

/**
 * The agent as the DaemonSet runs it, from this run's own copy of the bundle: the tests of other engineers on the
 * same tree rebuild dist/ from their working copies while a table runs.
 */
const startAgent = (node: AgentNode): RunningAgent =>
  spawnNode(
    [
      ...DEPLOYED_NODE_FLAGS,
      bundle,
      ...[
        "--node-name",
        node.name,
        "--kubeconfig",
        process.env.NODEMEND_KUBECONFIG!,
        "--host-root",
        node.host.root
      ],
      ...["--health-address", "127.0.0.1:0", "--config", node.host.writeConfig(benchConfig())]
    ],
    DEPLOYED_ENV
  )

let current: { agent?: RunningAgent; node: AgentNode } | undefined
const runRow = async (kind: Kind, row: Row): Promise<Result> => {
  const { texts, faults: planned, other } = plan(kind, row)
  const node = await createAgentNode(core, BOOT)
  current = { node }
  const events = await watchEvents(node.name)
  let agent: RunningAgent | undefined
  try {
    prepareHost(node)
    agent = current.agent = startAgent(node)
    await node.waitForCondition("KernelReady", "True", { timeoutMs: 90_000 })
    const staged = kind === "journal" ? stageJournal(node.host.root, texts) : undefined
    const port = /"health server listening".*?"port":(\d+)/.exec(agent.output())?.[1]
    if (port === undefined) throw new Error("no health port in the agent's output")
    const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const sources = [SOURCE[kind], SOURCE[other]]
    // Both sources watching: their series are on /metrics once their readers are registered.
    for (let m = await metrics(); !sources.every((s) => m.includes(`source="${s}"`)); m = await metrics())
      await sleep(100)
    await sleep(500)
    const pid = agent.child.pid!
    const vm = (key: string) =>
      Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024
    const m0 = await metrics()
    const read0 = Object.fromEntries(sources.map((s) => [s, readOf(m0, s)]))
    const rssBefore = vm("VmRSS")
    const faults: Fault[] = planned.map((f) => ({ ...f, writtenAt: Number.NaN }))
    const t0 = performance.now()
    append(node.host.root, kind, texts, staged)
    for (const f of faults) if (f.kind === kind) f.writtenAt = t0
    // The cross row's faults: one every 100 ms on the other source while the storm is read.
    const crossWrites = (async () => {
      for (const [k, f] of faults.filter((x) => x.kind !== kind).entries()) {
        if (k > 0) await sleep(100)
        f.writtenAt = performance.now()
        append(node.host.root, f.kind, [distinctFault(f.kind, DISTINCT_REASONS.indexOf(f.reason as never))])
      }
    })()
    let readAll: number | undefined
    const deadline = t0 + 600_000
    while (readAll === undefined && performance.now() < deadline) {
      const m = await metrics()
      const now = performance.now()
      for (const f of faults)
        if (f.readAt === undefined && readOf(m, SOURCE[f.kind]) - read0[SOURCE[f.kind]]! >= f.count)
          f.readAt = now
      if (readOf(m, SOURCE[kind]) - read0[SOURCE[kind]]! >= texts.length) readAll = now
      else await sleep(pollMs)
    }
    await crossWrites
    const until = performance.now() + DELIVERY_WAIT_MS
    while (
      faults.some((f) => !events.seen.has(f.reason) || f.readAt === undefined) &&
      performance.now() < until
    ) {
      const m = await metrics()
      for (const f of faults)
        if (f.readAt === undefined && readOf(m, SOURCE[f.kind]) - read0[SOURCE[f.kind]]! >= f.count)
          f.readAt = performance.now()
      await sleep(pollMs)
    }
    const m = await metrics()
    const delivered = faults.filter((f) => events.seen.has(f.reason))
    return {
      linesPerSec: readAll === undefined ? Number.NaN : texts.length / ((readAll - t0) / 1000),
      readToEvent: delivered.map((f) => events.seen.get(f.reason)! - (f.readAt ?? Number.NaN)),
      writtenToEvent: delivered.map((f) => events.seen.get(f.reason)! - f.writtenAt),
      delivered: delivered.length,
      expected: faults.length,
      missing: faults.filter((f) => !events.seen.has(f.reason)).map((f) => f.reason),
      shed: sum(m, "nodemend_agent_log_findings_shed_total{"),
      dropped: sum(m, "nodemend_agent_log_findings_dropped_total"),
      rssBefore,
      rssPeak: vm("VmHWM"),
      load: load()
    }
  } finally {
    events.stop()
    await agent?.stop()
    await node.close()
    current = undefined
  }
}

const range = (xs: readonly number[], f: (x: number) => string) => {
  const ok = xs.filter((x) => Number.isFinite(x))
  if (ok.length === 0) return "—"
  const [lo, hi] = [Math.min(...ok), Math.max(...ok)]
  return f(lo) === f(hi) ? f(lo) : `${f(lo)}-${f(hi)}`
}
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const kLines = (x: number) => `${Math.round(x / 1000)}k`

/** One table line from a row's runs: ranges over runs, the worst fault of each run. */
const tableLine = (kind: Kind, row: Row, rs: readonly Result[]) => {
  const worst = (xs: readonly number[]) => (xs.length === 0 ? Number.NaN : Math.max(...xs))
  return [
    kind,
    row === "cross"
      ? `100%, ${kind === "kmsg" ? "ipamd.log" : "kmsg"} faults during it`
      : row === "distinct"
        ? "20%, 10 distinct inside"
        : row.slice(6),
    range(
      rs.map((r) => r.linesPerSec),
      kLines
    ),
    range(
      rs.map((r) => worst(r.readToEvent)),
      secs
    ),
    range(
      rs.map((r) => worst(r.writtenToEvent)),
      secs
    ),
    rs.map((r) => `${r.delivered}/${r.expected}`).join(", "),
    rs.map((r) => `${r.shed.toLocaleString("en")}${r.dropped > 0 ? `+${r.dropped}` : ""}`).join(", "),
    `${range(
      rs.map((r) => r.rssBefore),
      (x) => x.toFixed(0)
    )} / ${range(
      rs.map((r) => r.rssPeak),
      (x) => x.toFixed(1)
    )} MiB`,
    rs.map((r) => r.load.split(" ")[0]).join(", ")
  ]
}

buildBundle()
const bundle = join(mkdtempSync(join(tmpdir(), "storm-table-")), "nodemend-agent.mjs")
// STORM_TABLE_BUNDLE: another build of the agent to compare (an A/B of a change), run with the same flags.
copyFileSync(process.env.STORM_TABLE_BUNDLE ?? BUNDLE, bundle)
// Interrupted: the agent and the Node of the row go too.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    void (async () => {
      await current?.agent?.stop()
      await current?.node.close()
      process.exit(130)
    })()
  })
console.log(
  `storm-table: ${lines} lines a storm, ${runs} run(s) a row, /metrics polled every ${pollMs} ms, load ${load()}`
)
console.log(
  "| source | storm | lines/s | read -> Event (worst) | written -> Event (worst) | delivered | shed (+untracked) | RSS before / peak | load (1 min) |"
)
console.log("|---|---|---|---|---|---|---|---|---|")
for (const kind of KINDS) {
  if (filters.some((f) => KINDS.includes(f as Kind)) && !filters.includes(kind)) continue
  if (kind === "journal" && JOURNAL_REMOTE === undefined) {
    console.log("| journal | (systemd-journal-remote not installed) |")
    continue
  }
  for (const row of ROWS) {
    const rowFilters = filters.filter((f) => !KINDS.includes(f as Kind))
    if (rowFilters.length > 0 && !rowFilters.some((f) => row.includes(f))) continue
    const rs: Result[] = []
    for (let r = 0; r < runs; r++) {
      const res = await runRow(kind, row)
      console.error(`  ${kind} ${row} run ${r + 1}: ${JSON.stringify(res)}`)
      rs.push(res)
    }
    console.log(`| ${tableLine(kind, row, rs).join(" | ")} |`)
  }
}
rmSync(dirname(bundle), { recursive: true, force: true })
console.log(`storm reasons: ${KINDS.map((k) => `${k} ${STORM_REASONS[k].join("+")}`).join("; ")}`)
