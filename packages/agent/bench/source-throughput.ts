/**
 * Lines/s per log source through the agent's real path, minus the Kubernetes writes: the reader (its line source)
 * -> the rule engine -> the bounded findings queue, drained (makeLogMonitors, as the agent runs it). For each
 * source (kmsg, journal, file, pod logs) and each input it appends N lines at once to a temporary host root and
 * times from the append to the last line delivered; it prints lines/s, findings, the drops of the findings queue
 * and the process's peak RSS (VmHWM) over the run.
 *
 *   node --conditions=source bench/source-throughput.ts [lines=200000] [journalLines=20000] [only=<scenario>...]
 *
 * Inputs: "chatter" (benign lines of the source, none a detection), "storm" (the same with 1% cited fault lines,
 * test/fixtures), and for kmsg two more: "npd-mixed" (mixed-kernel-log.ts at 1%, the input of the
 * node-problem-detector side-by-side, docs/performance.md) and "event-storm" (the kmsg storm of
 * test/integration/agent-event-storms.test.ts: one benign template, 0.5% soft lockups, 0.5% I/O errors).
 *
 * Each scenario runs in a fresh Node with the DaemonSet's V8 flags and environment, and bundled as the agent ships
 * (tools/bundle/bundle.mjs: the child is this script, bundled, with `--one`; from the sources Node keeps ~45 MiB
 * more of module text), so its peak RSS is its own and comparable to the agent's. The parent writes the input (and, for the journal, its journal file through
 * systemd-journal-remote) before the child starts, so the input's strings are not in the child's RSS; the child
 * appends it with `cat` (journal: renames the finished file into the journal directory).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope, Stream } from "effect"
import { compileRules, type LogSourceId } from "../src/rules/index.ts"
import { makeLogMonitors } from "../src/sources/index.ts"
import { ALL_FAULT_LINES } from "../test/fixtures/all-log-lines.ts"
import { deployedRuntime } from "../../../tools/bundle/shipped.mjs"
import { BENIGN_TEMPLATES, mixedKernelLog } from "./mixed-kernel-log.ts"
import { IPAMD_CHATTER, seededText } from "./seeded-text.ts"

type Kind = "kmsg" | "journal" | "file" | "podlogs"
const SOURCE: Record<Kind, LogSourceId> = {
  kmsg: "dmesg",
  journal: "journal:kubelet",
  file: "file:/var/log/aws-routed-eni/ipamd.log",
  podlogs: "podlogs:kube-proxy"
}
const IPAMD = "var/log/aws-routed-eni/ipamd.log"
const KUBE_PROXY_LOG =
  "var/log/pods/kube-system_kube-proxy-7x2kq_0d1c2b3a-1111-2222-3333-444455556666/kube-proxy/0.log"
const BOOT_SECONDS = 1_700_000_000
const JOURNAL_REMOTE = [
  "/lib/systemd/systemd-journal-remote",
  "/usr/lib/systemd/systemd-journal-remote"
].find((p) => existsSync(p))

const { rng, pick, fill } = seededText(0x1f123bb5)
/** As the kernel writes record text to /dev/kmsg: bytes < 0x20, >= 0x7f and the backslash as \xNN. */
const escapeKmsg = (text: string): string =>
  [...Buffer.from(text, "utf8")]
    .map((b) =>
      b < 0x20 || b >= 0x7f || b === 0x5c ? `\\x${b.toString(16).padStart(2, "0")}` : String.fromCharCode(b)
    )
    .join("")
const ts = () => new Date(Date.now() - Math.floor(rng() * 1000)).toISOString()

/** Benign chatter per source: what the component prints when all is well (none of it a detection, checked below). */
const CHATTER: Record<Kind, () => string> = {
  kmsg: () => fill(pick(KERNEL_CHATTER)),
  journal: () =>
    fill(
      pick([
        'I1101 12:00:00.000000    2140 kubelet.go:2445] "SyncLoop (PLEG): event for pod" pod="default/web-{h}" event={"ID":"{h}","Type":"ContainerStarted"}',
        'I1101 12:00:00.000000    2140 reconciler_common.go:245] "operationExecutor.VerifyControllerAttachedVolume started" volume="kube-api-access-{h}"',
        'I1101 12:00:00.000000    2140 kubelet_node_status.go:497] "Fast updating node status as it just became ready"',
        'I1101 12:00:00.000000    2140 pod_startup_latency_tracker.go:102] "Observed pod startup duration" pod="default/web-{h}" podStartSLOduration={n}'
      ])
    ),
  file: () =>
    JSON.stringify({
      level: "info",
      ts: ts(),
      caller: "ipamd/ipamd.go:651",
      msg: fill(pick(IPAMD_CHATTER))
    }),
  podlogs: () =>
    `${ts()} stderr F ${fill(
      pick([
        'I1101 12:00:00.000000       1 proxier.go:805] "SyncProxyRules complete" elapsed="{n}ms"',
        'I1101 12:00:00.000000       1 endpointslicecache.go:348] "Setting endpoints for service port name" portName="default/web-{h}" endpoints=["10.0.{n}.{n}:8080"]',
        'I1101 12:00:00.000000       1 service.go:301] "Service updated ports" service="default/web-{h}" portCount=1'
      ])
    )}`
}
const matcher = compileRules()
const silent = (kind: Kind, text: string) => matcher.match(SOURCE[kind], text).length === 0
/** The kernel templates of mixed-kernel-log.ts that are not detections to the agent (EDAC corrected errors are). */
const KERNEL_CHATTER = BENIGN_TEMPLATES.filter((t) => silent("kmsg", fill(t)))

/** The cited fault lines of a source, as the source carries them. */
const faults = (kind: Kind): string[] => {
  const lines = ALL_FAULT_LINES.filter((f) => f.source === SOURCE[kind]).map((f) => f.text)
  if (lines.length > 0) return lines
  throw new Error(`no fault fixtures for ${SOURCE[kind]}`)
}
const frame: Record<Kind, (text: string) => string> = {
  kmsg: (t) => escapeKmsg(t),
  journal: (t) => t,
  file: (t) => (t.startsWith("{") ? t : JSON.stringify({ level: "error", ts: ts(), msg: t })),
  podlogs: (t) => `${ts()} stderr F ${t}`
}

const texts = (kind: Kind, input: string, n: number): string[] => {
  if (input === "npd-mixed") return mixedKernelLog(n, 0.01).map(escapeKmsg)
  if (input === "event-storm")
    return Array.from({ length: n }, (_, i) =>
      i % 200 === 0
        ? `watchdog: BUG: soft lockup - CPU#${i % 96} stuck for ${22 + (i % 40)}s! [kworker/${i % 96}:1:${i}]`
        : i % 200 === 100
          ? `I/O error, dev nvme1n1, sector ${131209936 + i} op 0x0:(READ) flags 0x80700 phys_seg 25 prio class 0`
          : `IPv6: ADDRCONF(NETDEV_CHANGE): eni${i.toString(16)}: link becomes ready`
    )
  const rate = input === "storm" ? 0.01 : 0
  const fs = rate > 0 ? faults(kind) : []
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    if (rng() < rate) out.push(frame[kind](pick(fs)))
    else {
      const line = CHATTER[kind]()
      if (i < 200 && !silent(kind, line)) throw new Error(`chatter is a detection: ${line}`)
      out.push(line)
    }
  }
  return out
}

/** A host root with the sources in place (their files exist at start: their content is history). */
const makeHost = (): string => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-source-bench-"))
  mkdirSync(join(root, "proc"))
  writeFileSync(join(root, "proc/stat"), `btime ${BOOT_SECONDS}\n`)
  mkdirSync(join(root, "dev"))
  writeFileSync(join(root, "dev/kmsg"), "")
  mkdirSync(join(root, "var/log/journal"), { recursive: true })
  mkdirSync(join(root, "staging"))
  for (const f of [IPAMD, KUBE_PROXY_LOG]) {
    mkdirSync(join(root, f, ".."), { recursive: true })
    writeFileSync(join(root, f), "")
  }
  return root
}

/** Writes the input where the child will find it: staging/input (lines) or staging/input.journal. */
const stage = (root: string, kind: Kind, lines: readonly string[]) => {
  if (kind === "journal") {
    if (JOURNAL_REMOTE === undefined) throw new Error("systemd-journal-remote is not installed")
    // Stamped a minute ahead: the reader starts journalctl at its own start time.
    const us = BigInt(Date.now() + 60_000) * 1000n
    const text = lines
      .map((m, i) =>
        [
          `__REALTIME_TIMESTAMP=${us + BigInt(i)}`,
          `__MONOTONIC_TIMESTAMP=${1000 + i}`,
          "_BOOT_ID=0123456789abcdef0123456789abcdef",
          "SYSLOG_IDENTIFIER=kubelet",
          `MESSAGE=${m}`,
          ""
        ].join("\n")
      )
      .join("\n")
    execFileSync(JOURNAL_REMOTE, [`--output=${join(root, "staging/input.journal")}`, "-"], {
      input: `${text}\n`,
      stdio: ["pipe", "ignore", "ignore"],
      maxBuffer: 1 << 30
    })
    return
  }
  const body =
    kind === "kmsg"
      ? lines.map((t, i) => `6,${1000 + i},${3_600_000_000 + i * 10},-;${t}\n`).join("")
      : lines.map((l) => `${l}\n`).join("")
  writeFileSync(join(root, "staging/input"), body)
}

const vm = (key: string): number => {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))
  return m === null ? Number.NaN : Number(m[1]) / 1024
}

/** The child: the monitors on the staged host root, one append, the time to the last line. */
const runOne = async (root: string, kind: Kind, n: number) => {
  const source = SOURCE[kind]
  const scope = await Effect.runPromise(Scope.make())
  const monitors = await Effect.runPromise(Scope.provide(scope)(makeLogMonitors(root, {}, {})))
  // The agent's consumer of the findings queue, minus what it writes to Kubernetes.
  let consumed = 0
  Effect.runFork(Stream.runForEach(monitors.findings, () => Effect.sync(() => consumed++)))
  let seen = 0
  let done: () => void = () => undefined
  const all = new Promise<void>((resolve) => {
    done = resolve
  })
  monitors.hub.subscribe(source, () => {
    if (++seen >= n) done()
  })
  const deadline = Date.now() + 10_000
  while (monitors.status()[source] !== "watching" && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20))
  await new Promise((r) => setTimeout(r, 200))
  const rssBefore = vm("VmRSS")
  const t0 = performance.now()
  if (kind === "journal")
    renameSync(join(root, "staging/input.journal"), join(root, "var/log/journal/input.journal"))
  else {
    const target = { kmsg: "dev/kmsg", file: IPAMD, podlogs: KUBE_PROXY_LOG }[kind]
    const fd = openSync(join(root, target), "a")
    const cat = spawn("cat", [join(root, "staging/input")], { stdio: ["ignore", fd, "inherit"] })
    await new Promise((r) => cat.on("close", r))
    closeSync(fd)
  }
  const timedOut = await Promise.race([
    all.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 300_000).unref())
  ])
  const ms = performance.now() - t0
  await new Promise((r) => setTimeout(r, 50))
  const m = monitors.metrics()
  const result = {
    lines: seen,
    ms,
    timedOut,
    findings: m.detections + m.resolutions,
    consumed,
    dropped: m.findingsDropped,
    bytes: m.bySource[source]?.bytesRead ?? 0,
    rssBeforeMiB: rssBefore,
    peakRssMiB: vm("VmHWM")
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
  console.log(`RESULT ${JSON.stringify(result)}`)
}

const SCENARIOS: readonly (readonly [Kind, string])[] = [
  ["kmsg", "chatter"],
  ["kmsg", "storm"],
  ["kmsg", "npd-mixed"],
  ["kmsg", "event-storm"],
  ["journal", "chatter"],
  ["journal", "storm"],
  ["file", "chatter"],
  ["file", "storm"],
  ["podlogs", "chatter"],
  ["podlogs", "storm"]
]

if (process.argv[2] === "--one") {
  await runOne(process.argv[3]!, process.argv[4] as Kind, Number(process.argv[5]))
  process.exit(0)
} else {
  const lines = Number(process.argv[2] ?? 200_000)
  const journalLines = Number(process.argv[3] ?? 20_000)
  const only = process.argv.slice(4)
  const deployed = deployedRuntime("agent/daemonset.yaml")
  const bundleDir = mkdtempSync(join(tmpdir(), "nodemend-source-bench-bundle-"))
  const bundle = join(bundleDir, "source-throughput.mjs")
  execFileSync(
    process.execPath,
    [
      fileURLToPath(new URL("../../../tools/bundle/bundle.mjs", import.meta.url)),
      fileURLToPath(import.meta.url),
      bundle
    ],
    { cwd: fileURLToPath(new URL("..", import.meta.url)), stdio: ["ignore", "ignore", "inherit"] }
  )
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  console.log(
    `source-throughput: node ${process.version}, deployed flags ${deployed.flags.join(" ")}, load ${load}; ${lines} lines (journal ${journalLines}) per scenario`
  )
  console.log(
    `${"source".padEnd(8)} ${"input".padEnd(12)} ${"lines".padStart(8)} ${"lines/s".padStart(9)} ${"MB/s".padStart(6)} ${"findings".padStart(8)} ${"dropped".padStart(7)} ${"RSS before".padStart(10)} ${"peak RSS".padStart(9)}`
  )
  for (const [kind, input] of SCENARIOS) {
    if (only.length > 0 && !only.includes(`${kind}:${input}`)) continue
    if (
      kind === "journal" &&
      (JOURNAL_REMOTE === undefined || spawnSync("journalctl", ["--version"]).status !== 0)
    ) {
      console.log(`${kind.padEnd(8)} ${input.padEnd(12)} skipped: no systemd-journal-remote or journalctl`)
      continue
    }
    const n = kind === "journal" ? journalLines : lines
    const root = makeHost()
    try {
      stage(root, kind, texts(kind, input, n))
      const child = spawnSync(process.execPath, [...deployed.flags, bundle, "--one", root, kind, String(n)], {
        env: { ...process.env, ...deployed.env },
        encoding: "utf8",
        maxBuffer: 1 << 26
      })
      const line = child.stdout.split("\n").find((l) => l.startsWith("RESULT "))
      if (line === undefined) {
        console.log(`${kind} ${input}: no result\n${child.stdout.slice(-2000)}\n${child.stderr.slice(-2000)}`)
        continue
      }
      const r = JSON.parse(line.slice("RESULT ".length)) as {
        lines: number
        ms: number
        timedOut: boolean
        findings: number
        dropped: number
        bytes: number
        rssBeforeMiB: number
        peakRssMiB: number
      }
      const rate = Math.round(r.lines / (r.ms / 1000))
      console.log(
        `${kind.padEnd(8)} ${input.padEnd(12)} ${String(r.lines).padStart(8)} ${rate.toLocaleString("en").padStart(9)} ${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(1).padStart(6)} ${String(r.findings).padStart(8)} ${String(r.dropped).padStart(7)} ${r.rssBeforeMiB.toFixed(1).padStart(10)} ${r.peakRssMiB.toFixed(1).padStart(9)}${r.timedOut ? "  (timed out)" : ""}`
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
  rmSync(bundleDir, { recursive: true, force: true })
}
