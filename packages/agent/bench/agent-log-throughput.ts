/**
 * The shipped agent's kernel-log throughput alone, measured as the node-problem-detector side-by-side measures it
 * (bench/npd/side-by-side.ts): the bundle with the DaemonSet's V8 flags and environment on a kwok Node of the local
 * cluster (.nodemend/kubeconfig or NODEMEND_KUBECONFIG), all its monitors and finding sinks on (Events and
 * conditions written to the API server), N kernel records appended at once to its /dev/kmsg (a regular file), and
 * the time from the append until `nodemend_agent_log_lines_read_total{source="dmesg"}` on its /metrics (polled every
 * `pollMs`) has grown by N; also the agent's RSS before the append and its peak (VmHWM) by the end. With bench/source-throughput.ts (the same path in one process, no Kubernetes) it tells
 * the reader's share from the sinks' and the measurement's.
 *
 *   node --conditions=source bench/agent-log-throughput.ts [lines=200000] [pollMs=50] [input=npd-mixed|event-storm]...
 *
 * Inputs: "npd-mixed" is the side-by-side's input framed as it frames it (mixed-kernel-log.ts at 1%, every record
 * stamped with the same time, text not escaped); "event-storm" is the kmsg storm of
 * test/integration/agent-event-storms.test.ts (one benign template, 0.5% soft lockups, 0.5% I/O errors).
 */
import { appendFileSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { clients } from "@nodemend/cluster-harness"
import { createAgentNode } from "../test/integration/agent-node.ts"
import { buildBundle } from "../test/integration/agent-process.ts"
import { mixedKernelLog } from "./mixed-kernel-log.ts"

const lines = Number(process.argv[2] ?? 200_000)
const pollMs = Number(process.argv[3] ?? 50)
const inputs = process.argv.length > 4 ? process.argv.slice(4) : ["npd-mixed", "event-storm"]
const BOOT = "6a1f0c2e-0000-4000-8000-00000000b0b0"

const texts = (input: string): string[] =>
  input === "npd-mixed"
    ? mixedKernelLog(lines, 0.01)
    : Array.from({ length: lines }, (_, i) =>
        i % 200 === 0
          ? `watchdog: BUG: soft lockup - CPU#${i % 96} stuck for ${22 + (i % 40)}s! [kworker/${i % 96}:1:${i}]`
          : i % 200 === 100
            ? `I/O error, dev nvme1n1, sector ${131209936 + i} op 0x0:(READ) flags 0x80700 phys_seg 25 prio class 0`
            : `IPv6: ADDRCONF(NETDEV_CHANGE): eni${i.toString(16)}: link becomes ready`
      )

/** The sum of a metric's series whose line starts with `prefix` and contains every one of `labels`. */
const sum = (metrics: string, prefix: string, ...labels: string[]) =>
  metrics
    .split("\n")
    .filter((l) => l.startsWith(prefix) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)

buildBundle()
const { core } = clients()
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
console.log(
  `agent-log-throughput: ${lines} kernel records per input, /metrics polled every ${pollMs} ms, load ${load()}`
)
for (const input of inputs) {
  const records = texts(input)
  const node = await createAgentNode(core, BOOT)
  try {
    node.start("{}\n", { bundle: true })
    await node.waitForCondition("KernelReady", "True", { timeoutMs: 90_000 })
    const port = /"health server listening".*?"port":(\d+)/.exec(node.agent?.output() ?? "")?.[1]
    if (port === undefined) throw new Error("no health port in the agent's output")
    const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const pid = node.agent!.child.pid!
    const vm = (key: string) =>
      Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024
    const rssBefore = vm("VmRSS")
    const read0 = sum(await metrics(), 'nodemend_agent_log_lines_read_total{source="dmesg"}')
    // As the side-by-side: every record stamped now (boot time + monotonic usec), in one append.
    const usec = 3_600_000_000
    const body = records.map((t, i) => `6,${1_000_000 + i},${usec},-;${t}\n`).join("")
    const t0 = performance.now()
    appendFileSync(join(node.host.root, "dev/kmsg"), body)
    let done: number | undefined
    const deadline = Date.now() + 600_000
    while (done === undefined && Date.now() < deadline) {
      if (sum(await metrics(), 'nodemend_agent_log_lines_read_total{source="dmesg"}') - read0 >= lines)
        done = performance.now()
      else await new Promise((r) => setTimeout(r, pollMs))
    }
    const m = await metrics()
    const rss = `RSS before ${rssBefore.toFixed(1)} MiB, peak ${vm("VmHWM").toFixed(1)} MiB`
    const s = done === undefined ? Number.NaN : (done - t0) / 1000
    console.log(
      `${input.padEnd(12)} ${done === undefined ? "did not finish" : `${Math.round(lines / s).toLocaleString("en")} lines/s (${s.toFixed(2)} s)`}; findings ${sum(m, "nodemend_agent_findings_total{")}, events created ${sum(m, "nodemend_agent_events_total{", 'outcome="created"')}, throttled ${sum(m, "nodemend_agent_events_throttled_total{")}, condition writes ${sum(m, "nodemend_agent_condition_writes_total{")}; ${rss}; load ${load()}`
    )
  } finally {
    await node.close()
  }
}
