/**
 * The agent binary under hostile input on its `file:` and `podlogs:` sources, against the real API server (the
 * kmsg and journal storms are in hostileInput.itest.ts). On the VPC CNI's ipamd.log (`file:`) and kube-proxy's
 * container logs (`podlogs:kube-proxy`, CRI format): malformed lines, 1 MiB lines, binary lines; then the file
 * truncated, rotated by rename, removed and created again, and its directory removed and created again (for
 * pod logs: a container restart, the log rotated as the kubelet does, the pod replaced by a new one, the whole
 * /var/log/pods removed and back). Checked: the agent never exits, its RSS stays below the DaemonSet's memory
 * limit (sampled every 200 ms; figure), and a fault written after all of it is detected (an IPAMDNoIPs Event
 * from ipamd.log, a KubeProxyNotReady Event from the new kube-proxy pod's log). The shipped bundle with the
 * DaemonSet's V8 flags and environment.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, truncateSync } from "node:fs"
import { dirname, join } from "node:path"
import { EventsV1Api } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type AgentNode, createAgentNode } from "../integration/agent-node.ts"
import { buildBundle } from "../integration/agent-process.ts"
import { nodeEvents } from "../integration/node-events.ts"

const LONG = process.env.NODEMEND_RELIABILITY_LONG === "1"
const BOOT = "6a1f0c2e-0000-4000-8000-00000000a317"
const CONFIG = "{}\n"
const MALFORMED = LONG ? 1_000_000 : 20_000
const HUGE = LONG ? 100 : 10
const BINARY = LONG ? 100_000 : 2_000
/** Lines of one storm (each of its writes ends in a newline). */
const STORM_LINES = MALFORMED + HUGE + BINARY
/** The agent container's memory limit in deploy/agent/daemonset.yaml. */
const MEMORY_LIMIT_MIB = 200

const IPAMD = "var/log/aws-routed-eni/ipamd.log"
const podDir = (hash: string) =>
  `var/log/pods/kube-system_kube-proxy-${hash}_0d1c2b3a-1111-2222-3333-${hash.padEnd(12, "0")}/kube-proxy`

const { kc, core } = clients()
const events = kc.makeApiClient(EventsV1Api)
let node: AgentNode

const rssKiB = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m === null ? 0 : Number(m[1])
  } catch {
    return 0
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function* times<T>(n: number, f: (i: number) => T) {
  for (let i = 0; i < n; i++) yield f(i)
}

/** Appends lines in chunks (a writer flushing its buffer), each line ended by a newline. */
const appendLines = (rel: string, lines: Iterable<string | Buffer>) => {
  const path = join(node.host.root, rel)
  mkdirSync(dirname(path), { recursive: true })
  const chunk: Buffer[] = []
  let size = 0
  const flush = () => {
    appendFileSync(path, Buffer.concat(chunk))
    chunk.length = 0
    size = 0
  }
  for (const l of lines) {
    const b = typeof l === "string" ? Buffer.from(`${l}\n`) : Buffer.concat([l, Buffer.from("\n")])
    chunk.push(b)
    size += b.length
    if (size >= 4 << 20) flush()
  }
  if (chunk.length > 0) flush()
}

/** Bytes 0x00-0xff except the newline: not UTF-8, not text. */
const binaryLine = (i: number) =>
  Buffer.from(Array.from({ length: 256 }, (_, j) => (i * 31 + j * 7) % 256).map((b) => (b === 10 ? 11 : b)))

/** The hostile lines of one storm; `wrap` puts each in the source's format (CRI for pod logs). */
const storm = (rel: string, wrap: (text: string) => string) => {
  appendLines(
    rel,
    times(MALFORMED, (i) =>
      i % 4 === 0
        ? `{"level":"error","ts":"not a time","msg":"${"\\".repeat(i % 9)}` // broken JSON, unterminated
        : i % 4 === 1
          ? wrap(`\u0000\u0007\u001b[31m garbage ${i} ;;;; ${"x".repeat(i % 300)}`)
          : i % 4 === 2
            ? `${"9".repeat(i % 40)}-13-45T99:99:99Z stdout Q no such stream ${i}`
            : wrap(`Failed to watch ${i}: but not the whole phrase`)
    )
  )
  appendLines(
    rel,
    times(HUGE, (i) =>
      wrap(`${i % 2 === 0 ? "InsufficientFreeAddressesIn" : "Failed to watch "}${"A".repeat(1 << 20)}`)
    )
  )
  appendLines(rel, times(BINARY, binaryLine))
}

const now = () => new Date().toISOString()
const cri = (text: string) => `${now()} stderr F ${text}`
const ipamdNoIps = () =>
  JSON.stringify({
    level: "error",
    ts: now(),
    caller: "ipamd/ipamd.go:934",
    msg: "Failed to allocate a private IP/Prefix addresses on ENI eni-01f879673fc5fd14d: InsufficientFreeAddressesInSubnet: The specified subnet does not have enough free addresses to satisfy the request.\n\tstatus code: 400, request id: aeac321e-be9f-4a13-9b2f-e6ef5985689a"
  })
const kubeProxyMissing = (resource: string) =>
  cri(
    `E1101 06:38:40.581547       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch ${resource}: failed to list ${resource}: the server could not find the requested resource`
  )

/** The agent's counters of one log source, from its /metrics (the port from its "health server listening" log). */
const sourceCounters = async (source: string) => {
  const port = /"health server listening".*?"port":(\d+)/.exec(node.agent?.output() ?? "")?.[1]
  if (port === undefined) return { linesRead: 0, linesTruncated: 0 }
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const counter = (name: string) =>
    Number(
      text
        .split("\n")
        .find((l) => l.startsWith(`${name}{`) && l.includes(`source="${source}"`))
        ?.split(" ")
        .at(-1) ?? 0
    )
  return {
    linesRead: counter("nodemend_agent_log_lines_read_total"),
    linesTruncated: counter("nodemend_agent_log_lines_truncated_total")
  }
}
/** Waits until the agent has read `n` lines of `source` in all (every line of a phase, before the next). */
const waitForLinesRead = (source: string, n: number, what: string) =>
  waitFor(
    `${n} lines of ${source} read (${what})`,
    async () => {
      const c = await sourceCounters(source)
      return c.linesRead >= n ? c : undefined
    },
    { timeoutMs: LONG ? 900_000 : 120_000, intervalMs: 250 }
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\nagent output:\n${node.agent?.output().slice(-4000)}`)
  })

/** Starts the agent, samples its RSS until `run` settles, and checks the invariants. */
const trial = async (label: string, run: () => Promise<Record<string, unknown>>) => {
  const agent = node.start(CONFIG, { bundle: true })
  await node.waitForCondition("NetworkingReady", "True", { timeoutMs: 60_000 })
  const pid = agent.child.pid ?? 0
  const baseline = rssKiB(pid)
  let peak = baseline
  let sampling = true
  const sampler = (async () => {
    while (sampling && agent.child.exitCode === null) {
      peak = Math.max(peak, rssKiB(pid))
      await sleep(200)
    }
  })()
  let result: Awaited<ReturnType<typeof run>>
  try {
    result = await run()
  } finally {
    sampling = false
    await sampler
  }
  const figures = {
    name: `agent-hostile-${label}`,
    long: LONG,
    malformedLines: MALFORMED,
    hugeLines1MiB: HUGE,
    binaryLines: BINARY,
    ...result,
    rssBaselineMiB: Math.round(baseline / 1024),
    rssPeakMiB: Math.round(peak / 1024)
  }
  console.log(`RELIABILITY ${JSON.stringify(figures)}`)
  const file = process.env.NODEMEND_RELIABILITY_FIGURES
  if (file !== undefined && file !== "") appendFileSync(file, `${JSON.stringify(figures)}\n`)
  expect(agent.child.exitCode).toBeNull()
  expect(peak / 1024).toBeLessThan(MEMORY_LIMIT_MIB)
}

const waitForEvent = (reason: string) =>
  waitFor(
    `${reason} Event`,
    async () => (await nodeEvents(events, node.name)).find((e) => e.reason === reason),
    { timeoutMs: 60_000, intervalMs: 250 }
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\nagent output:\n${node.agent?.output().slice(-4000)}`)
  })

describe("agent under hostile input on file: and podlogs: sources", () => {
  beforeAll(() => buildBundle(), 300_000)
  beforeEach(async () => {
    node = await createAgentNode(core, BOOT)
    // The VPC CNI's log and one kube-proxy pod exist when the agent starts (their content is history).
    node.host.write(IPAMD, `${JSON.stringify({ level: "info", ts: now(), msg: "Starting L-IPAMD" })}\n`)
    node.host.write(`${podDir("aaaaa")}/0.log`, `${cri("I1101 starting kube-proxy")}\n`)
  }, 240_000)
  afterEach(async () => {
    await node?.close()
  })

  it("file: ipamd.log storm (malformed, 1 MiB, binary), truncated, rotated, removed, its directory removed: no crash, RSS bounded, detection arrives", async () => {
    await trial("file", async () => {
      const source = `file:/${IPAMD}`
      const started = Date.now()
      storm(IPAMD, (t) => t)
      const stormWriteMs = Date.now() - started
      let read = STORM_LINES
      /** The running total of lines written, `n` more. */
      const more = (n: number) => {
        read += n
        return read
      }
      const { linesTruncated } = await waitForLinesRead(source, read, "the storm")
      const stormReadMs = Date.now() - started
      const path = join(node.host.root, IPAMD)
      // Truncated in place (copytruncate), then more lines.
      truncateSync(path, 0)
      appendLines(
        IPAMD,
        times(1000, (i) => `after truncation ${i}`)
      )
      await waitForLinesRead(source, more(1000), "after the truncation")
      // Rotated by rename, a new file.
      renameSync(path, `${path}.1`)
      appendLines(
        IPAMD,
        times(1000, (i) => `after rotation ${i}`)
      )
      await waitForLinesRead(source, more(1000), "after the rotation")
      // Removed, and back a second later.
      rmSync(path)
      await sleep(1000)
      appendLines(
        IPAMD,
        times(1000, (i) => `after removal ${i}`)
      )
      await waitForLinesRead(source, more(1000), "after the removal")
      // Its directory removed, and back: before the fix the tailer's watch stayed on the removed directory.
      rmSync(dirname(path), { recursive: true })
      await sleep(2000)
      appendLines(
        IPAMD,
        times(1000, (i) => `after directory removal ${i}`)
      )
      await waitForLinesRead(source, more(1000), "after the directory removal")
      const faultAt = Date.now()
      appendFileSync(path, `${ipamdNoIps()}\n`)
      await waitForEvent("IPAMDNoIPs")
      return {
        stormWriteMs,
        stormReadMs,
        linesTruncated,
        linesRead: (await sourceCounters(source)).linesRead,
        detectedAfterFaultMs: Date.now() - faultAt,
        reason: "IPAMDNoIPs"
      }
    })
  })

  it("podlogs: kube-proxy storm (malformed CRI, 1 MiB, binary), restart, rotation, pod replaced, /var/log/pods removed: no crash, RSS bounded, detection arrives", async () => {
    await trial("podlogs", async () => {
      const source = "podlogs:kube-proxy"
      const started = Date.now()
      const first = podDir("aaaaa")
      storm(`${first}/0.log`, cri)
      const stormWriteMs = Date.now() - started
      let read = STORM_LINES
      /** The running total of lines written, `n` more. */
      const more = (n: number) => {
        read += n
        return read
      }
      const { linesTruncated } = await waitForLinesRead(source, read, "the storm")
      const stormReadMs = Date.now() - started
      // A container restart: 1.log next to 0.log, read from its start.
      appendLines(
        `${first}/1.log`,
        times(1000, (i) => cri(`after restart ${i}`))
      )
      await waitForLinesRead(source, more(1000), "after the container restart")
      // The kubelet's rotation: 1.log renamed with a timestamp, a new 1.log.
      renameSync(join(node.host.root, first, "1.log"), join(node.host.root, first, "1.log.20261201-120000"))
      appendLines(
        `${first}/1.log`,
        times(1000, (i) => cri(`after rotation ${i}`))
      )
      await waitForLinesRead(source, more(1000), "after the rotation")
      // The pod replaced by a new one.
      rmSync(join(node.host.root, dirname(first)), { recursive: true })
      appendLines(
        `${podDir("bbbbb")}/0.log`,
        times(1000, (i) => cri(`new pod ${i}`))
      )
      await waitForLinesRead(source, more(1000), "the new pod")
      // /var/log/pods removed and back (a kubelet reinstalled, a node image reset): before the fix the reader's
      // watch stayed on the removed directory and no pod that came after was read.
      rmSync(join(node.host.root, "var/log/pods"), { recursive: true })
      await sleep(2000)
      appendLines(
        `${podDir("ccccc")}/0.log`,
        times(1000, (i) => cri(`after pods removal ${i}`))
      )
      await waitForLinesRead(source, more(1000), "after /var/log/pods was removed")
      const faultAt = Date.now()
      appendFileSync(
        join(node.host.root, podDir("ccccc"), "0.log"),
        `${kubeProxyMissing("*v1.EndpointSlice")}\n`
      )
      await waitForEvent("KubeProxyNotReady")
      return {
        stormWriteMs,
        stormReadMs,
        linesTruncated,
        linesRead: (await sourceCounters(source)).linesRead,
        detectedAfterFaultMs: Date.now() - faultAt,
        reason: "KubeProxyNotReady"
      }
    })
  })
})
