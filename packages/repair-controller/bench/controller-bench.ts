/**
 * Repair-controller bench: prints figures, asserts nothing. Against the local cluster (NODEMEND_KUBECONFIG,
 * default <repo>/.nodemend/kubeconfig), with the shipped bundle (built from the current sources) in a child
 * process, run with the Deployment's V8 flags. `HEAP_SNAPSHOT=1` sends SIGUSR2 at the burst's peak (the
 * controller then writes a .heapsnapshot into the package directory; --heap-snapshot-signal is added);
 * `CONTROLLER_LOG=<file>` keeps the controller's log; `CPU_PROF=<dir>` runs it with --cpu-prof (the profile is
 * written into <dir> when it exits).
 *
 *   NODES=5000 PODS=50000 LATENCY_REPAIRS=50 FAILURES=1000 npm run bench -w @nodemend/repair-controller
 *
 * Measures: controller RSS (max of /proc/<pid>/status VmRSS), toleration expiry -> taint (p50/p99; expiry = the
 * instant the condition is first seen, by the bench's own watch or the controller, + toleration: the controller
 * times a toleration from its own first sight, decide/toleratedFrom.ts, not from the whole-second
 * lastTransitionTime, which lies up to 1 s before the write is sent and the write's round trip before it is
 * visible; the figure from lastTransitionTime is printed too, and where the time goes per stage), Kubernetes API
 * requests per repair (from the controller's own counter, background rate subtracted),
 * and how many of FAILURES simultaneous failures in one pool are acted on versus ceil(20% x pool); then it
 * follows the burst's repairs (up to BURST_FOLLOW_SECONDS) with RSS still sampled, so the peak includes them.
 */
import { type V1Node, Watch } from "@kubernetes/client-node"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  clients,
  createFakeNode,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  deleteRunNodes,
  patchNodeCondition,
  RUN_ID,
  TEST_RUN_LABEL,
  waitFor
} from "@nodemend/cluster-harness"
import {
  type ControllerProcess,
  deployedNodeFlags,
  startControllerProcess
} from "../test/integration/controllerProcess.ts"

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d)
const NODES = env("NODES", 5000)
const PODS = env("PODS", 50_000)
const LATENCY_REPAIRS = env("LATENCY_REPAIRS", 50)
const FAILURES = env("FAILURES", 1000)
const TOLERATION_S = env("TOLERATION_SECONDS", 5)
const CONCURRENCY = env("CONCURRENCY", 32)
const BURST_FOLLOW_S = env("BURST_FOLLOW_SECONDS", 240)
const HEAP_SNAPSHOT = process.env.HEAP_SNAPSHOT === "1"
/** A directory: the controller runs with --cpu-prof and writes its profile there when it exits. */
const CPU_PROF = process.env.CPU_PROF
/**
 * `REUSE=<run id>:<namespace>`: measure again on the Nodes and pods a `KEEP=1` run (or one that stopped early) left:
 * nothing is created, every node of that run with KernelReady=False is set back to True first, and the latency
 * repairs start at node `LATENCY_OFFSET` (use nodes no earlier run failed). With `LATENCY_ONLY=1` the bench stops
 * once every latency node is tainted (no wait for the repairs to finish: no requests per repair, no burst) and
 * leaves the objects.
 */
const REUSE = process.env.REUSE?.split(":")
const LATENCY_OFFSET = env("LATENCY_OFFSET", 0)
const LATENCY_ONLY = process.env.LATENCY_ONLY === "1"

const REPO = fileURLToPath(new URL("../../..", import.meta.url))
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? join(REPO, ".nodemend/kubeconfig")
process.env.NODEMEND_KUBECONFIG = kubeconfig
const { core, kc } = clients(kubeconfig)
const POOL = `bench-${RUN_ID}`
const TAG = "nodemend.io/bench"

const log = (msg: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)

async function pool<T>(items: readonly T[], n: number, f: (t: T, i: number) => Promise<unknown>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        for (let attempt = 0; ; attempt++) {
          try {
            await f(items[i]!, i)
            break
          } catch (e) {
            if (attempt >= 4) throw e
            await new Promise((r) => setTimeout(r, 200 * (attempt + 1)))
          }
        }
      }
    })
  )
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!
}

/** RSS split as the kernel sees it: anonymous (heap, malloc) vs file-backed (the node binary, shared libs). */
const memSplit = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? Number.NaN) / 1024
  return `anon ${kb("RssAnon").toFixed(0)} MiB, file ${kb("RssFile").toFixed(0)} MiB`
}

const rssMiB = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return m ? Number(m[1]) / 1024 : Number.NaN
}

const metric = (text: string, name: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)

/** The bucket bound a histogram's q-quantile falls in (Prometheus buckets: cumulative counts by `le`). */
const bucketQuantile = (text: string, name: string, q: number) => {
  const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, "gm"))].map(
    (m) => ({
      le: m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]),
      n: Number(m[2])
    })
  )
  const total = buckets.at(-1)?.n ?? 0
  return total === 0 ? Number.NaN : (buckets.find((b) => b.n >= q * total)?.le ?? Number.NaN)
}

/** The Lease keeper's renewals and the controller thread's event loop delay (ADR 0020), as the bench prints them. */
const leaseLine = (text: string) => {
  const count = metric(text, "nodemend_controller_lease_renewal_seconds_count")
  const mean = metric(text, "nodemend_controller_lease_renewal_seconds_sum") / count
  const delay = (q: string) =>
    metric(text, `nodemend_controller_event_loop_delay_seconds{quantile="${q}"}`).toFixed(3)
  return `lease renewals: ${count}, mean ${(mean * 1000).toFixed(0)} ms, p99 <= ${bucketQuantile(text, "nodemend_controller_lease_renewal_seconds", 0.99)} s (histogram bucket); controller thread's event loop delay, last 15 s: p99 ${delay("0.99")} s, max ${delay("max")} s`
}

/** How the controller ended: still leading, or exited with the reason it logged. */
const endLine = (ctl: ControllerProcess) => {
  const { exitCode, signalCode } = ctl.proc
  if (exitCode === null && signalCode === null) return "controller: still leading at the end of the bench"
  const lost = ctl
    .logs()
    .split("\n")
    .findLast((l) => l.includes("lost leadership"))
  return `controller: exited (code ${exitCode}, signal ${signalCode})${lost === undefined ? "" : `; ${lost}`}`
}

/**
 * When each of `names` first shows KernelReady=False to a watcher of the API server (epoch ms): the instant the
 * condition is visible, as the controller's informer can first see it. Watches `selector`'s Nodes from now on.
 */
const watchVisible = async (selector: string, names: ReadonlySet<string>) => {
  const visible = new Map<string, number>()
  let rv = (await core.listNode({ labelSelector: selector, limit: 1 })).metadata?.resourceVersion ?? ""
  let stopped = false
  let abort: AbortController | undefined
  const run = async (): Promise<void> => {
    if (stopped) return
    try {
      abort = await new Watch(kc).watch(
        "/api/v1/nodes",
        { labelSelector: selector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 25 },
        (type, obj: V1Node) => {
          const at = Date.now()
          rv = obj?.metadata?.resourceVersion ?? rv
          const name = obj?.metadata?.name
          if (type === "BOOKMARK" || type === "ERROR" || name === undefined || !names.has(name)) return
          const c = obj.status?.conditions?.find((x) => x.type === "KernelReady")
          if (c?.status === "False" && !visible.has(name)) visible.set(name, at)
        },
        () => {
          if (!stopped) setTimeout(() => void run(), 0)
        }
      )
    } catch {
      setTimeout(() => void run(), 200)
    }
  }
  await run()
  return {
    visible,
    stop: () => {
      stopped = true
      abort?.abort()
    }
  }
}

const setKernel = (name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status,
    reason: "ForkFailedOutOfPIDs",
    message: "bench",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

async function main() {
  log(
    `scale: ${NODES} nodes, ${PODS} pods; ${LATENCY_REPAIRS} latency repairs; ${FAILURES} simultaneous failures`
  )
  const runId = REUSE?.[0] ?? RUN_ID
  const ns = REUSE?.[1] ?? (await createTestNamespace(core, "bench"))
  // The controller's own namespace (its journal, lease, shifts): a new one each run, so no earlier run's repairs
  // are resumed into this one.
  const controllerNs = REUSE !== undefined ? await createTestNamespace(core, "bench") : ns
  const names = Array.from({ length: NODES }, (_, i) => `bench-${runId}-${i}`)
  log(`objects: REUSE=${runId}:${ns} measures again on them`)
  let t = Date.now()
  if (REUSE !== undefined) {
    const failed = names.slice(0, LATENCY_OFFSET)
    // A node an earlier controller already removed is simply gone.
    await pool(failed, CONCURRENCY, (name) => setKernel(name, "True").catch(() => undefined))
    log(
      `reusing ${NODES} nodes and ${PODS} pods of run ${runId}; ${failed.length} earlier latency nodes healed`
    )
  }
  if (REUSE === undefined)
    await pool(names, CONCURRENCY, (name) =>
      createFakeNode(core, {
        name,
        labels: { "karpenter.sh/nodepool": POOL, [TAG]: RUN_ID, "topology.kubernetes.io/zone": "test-zone-a" }
      })
    )
  if (REUSE === undefined) log(`created ${NODES} nodes in ${((Date.now() - t) / 1000).toFixed(1)} s`)
  t = Date.now()
  if (REUSE === undefined)
    await pool(
      Array.from({ length: PODS }, (_, i) => i),
      CONCURRENCY,
      (i) => createTestPod(core, ns, { bindTo: names[i % NODES]!, tolerations: [], labels: { app: "bench" } })
    )
  if (REUSE === undefined) log(`created ${PODS} pods in ${((Date.now() - t) / 1000).toFixed(1)} s`)

  const nodeFlags = [
    ...deployedNodeFlags(),
    ...(HEAP_SNAPSHOT ? ["--heap-snapshot-signal=SIGUSR2"] : []),
    ...(CPU_PROF !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`] : [])
  ]
  log(`controller: bundle, node ${nodeFlags.join(" ")}`)
  const ctl = await startControllerProcess(
    kubeconfig,
    {
      cloudProvider: "kwok",
      namespace: controllerNs,
      nodeSelector: `${TEST_RUN_LABEL}=${runId},${TAG}=${runId}`,
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: TOLERATION_S }],
      drain: { deadlineSeconds: 30, onDeadline: "force" },
      zonalShift: { refreshSeconds: 5 },
      breaker: { requeueSeconds: 5 },
      leaderElection: { leaseName: `bench-${RUN_ID}`, leaseDurationSeconds: 15, renewIntervalSeconds: 2 },
      kwok: { replacementDelaySeconds: 1, zonalShiftConfigMap: "bench-shifts" },
      resyncSeconds: 600
    },
    undefined,
    { bundle: true, nodeFlags }
  )
  controller = ctl
  const pid = ctl.proc.pid!
  let maxRss = 0
  let phaseMax = 0
  let peakSplit = ""
  const sampler = setInterval(() => {
    try {
      const rss = rssMiB(pid)
      if (rss > maxRss) peakSplit = memSplit(pid)
      maxRss = Math.max(maxRss, rss)
      phaseMax = Math.max(phaseMax, rss)
    } catch {}
  }, 250)
  /** Max RSS since the last call (one figure per phase). */
  const phasePeak = () => {
    const m = phaseMax
    phaseMax = 0
    return m
  }
  t = Date.now()
  // "synced", not just 200: a replica standing by for the lease is ready too, and the leader lists its Nodes only
  // after taking the lease (a wave written before that list ends would wait for it, not for the controller).
  await waitFor(
    "controller synced",
    async () =>
      (await ctl.get("/readyz").catch(() => ({ status: 0, body: "" }))).body === "synced" ? true : undefined,
    {
      timeoutMs: 600_000,
      intervalMs: 200
    }
  )
  const syncRss = rssMiB(pid)
  const syncPeak = phasePeak()
  log(
    `controller synced in ${((Date.now() - t) / 1000).toFixed(1)} s, RSS ${syncRss.toFixed(0)} MiB (${memSplit(pid)})`
  )

  /** First event with `reason` per node (eventTime, epoch ms): the controller stamps it right after the write. */
  const firstEvents = async (reason: string) => {
    const out = new Map<string, number>()
    let _continue: string | undefined
    do {
      const page = await core.listNamespacedEvent({
        namespace: "default",
        fieldSelector: `reason=${reason}`,
        limit: 500,
        _continue
      })
      for (const e of page.items) {
        const name = e.involvedObject?.name
        const at = new Date(String(e.eventTime ?? e.firstTimestamp ?? "")).getTime()
        if (name !== undefined && Number.isFinite(at) && !(out.get(name)! <= at)) out.set(name, at)
      }
      _continue = page.metadata?._continue
    } while (_continue)
    return out
  }

  /**
   * Where the time between the condition's write and the taint goes, per latency node: the whole-second
   * lastTransitionTime against the write (the bench's patch sent, answered, seen by its watch), the controller's
   * first sight (its toleration runs from it, decide/toleratedFrom.ts: the journal's tolerationExpiredAt less the
   * toleration), its decision (startedAt), the journal write (RepairStarted's eventTime) and the taint (Tainted's).
   * Read once every latency node is tainted, before the repairs end and their journals go.
   */
  const stageLines = async (
    nodes: readonly string[],
    expiry: ReadonlyMap<string, number>,
    sent: ReadonlyMap<string, number>,
    written: ReadonlyMap<string, number>,
    visible: ReadonlyMap<string, number>
  ) => {
    const [started, tainted, journals] = await Promise.all([
      firstEvents("RepairStarted"),
      firstEvents("Tainted"),
      core.listNamespacedConfigMap({
        namespace: controllerNs,
        labelSelector: "nodemend.io/repair-journal=true"
      })
    ])
    const records = new Map<string, { tolerationExpiredAt?: string; startedAt: string }>()
    for (const cm of journals.items) {
      try {
        const r = JSON.parse(cm.data?.record ?? "")
        records.set(r.node.name, r)
      } catch {}
    }
    const firstVisible = (n: string) => {
      const at = records.get(n)?.tolerationExpiredAt
      const sight = at === undefined ? Number.POSITIVE_INFINITY : Date.parse(at) - TOLERATION_S * 1000
      return Math.min(visible.get(n)!, sight)
    }
    const rows = nodes.flatMap((n) => {
      const r = records.get(n)
      if (r?.tolerationExpiredAt === undefined || !tainted.has(n) || !started.has(n) || !visible.has(n))
        return []
      const ctlExpiry = Date.parse(r.tolerationExpiredAt)
      const decided = Date.parse(r.startedAt)
      return [
        {
          floor: sent.get(n)! + TOLERATION_S * 1000 - expiry.get(n)!,
          request: written.get(n)! - sent.get(n)!,
          visible: visible.get(n)! - sent.get(n)!,
          sight: ctlExpiry - TOLERATION_S * 1000 - visible.get(n)!,
          decide: decided - ctlExpiry,
          journal: started.get(n)! - decided,
          taint: tainted.get(n)! - started.get(n)!,
          fromVisible: tainted.get(n)! - firstVisible(n) - TOLERATION_S * 1000,
          fromCtl: tainted.get(n)! - ctlExpiry
        }
      ]
    })
    const col = (k: keyof (typeof rows)[number]) => {
      const xs = rows.map((r) => r[k])
      return `${k} ${[50, 90, 99].map((p) => pct(xs, p).toFixed(0)).join(" / ")} / ${Math.max(...xs).toFixed(0)}`
    }
    // Every tainted node the watch saw, with or without its journal (a repair may end and drop it first); visible
    // at the earlier of the bench's watch and the controller's first sight (either thread may be the busier one).
    const fromVisible = nodes
      .filter((n) => tainted.has(n) && visible.has(n))
      .map((n) => (tainted.get(n)! - firstVisible(n)) / 1000 - TOLERATION_S)
    return [
      `toleration expiry -> taint, from the condition visible (first seen by the bench's watch or the controller) + toleration (${fromVisible.length} of ${nodes.length} repairs): p50 ${pct(fromVisible, 50).toFixed(3)} s, p99 ${pct(fromVisible, 99).toFixed(3)} s, max ${Math.max(...fromVisible).toFixed(3)} s (goal p99 <= 1 s)`,
      `stages (${rows.length} of ${nodes.length}: ${nodes.filter((n) => records.has(n)).length} journaled, ${nodes.filter((n) => started.has(n)).length} RepairStarted, ${nodes.filter((n) => tainted.has(n)).length} Tainted, ${nodes.filter((n) => visible.has(n)).length} seen by the watch; ms p50 / p90 / p99 / max): ${col("floor")} (the bench's patch sent after its whole-second lastTransitionTime); ${col("request")} (the patch sent -> answered); ${col("visible")} (the patch sent -> the bench's watch sees it); ${col("sight")} (seen by the bench's watch -> the controller's first sight); ${col("decide")} (its toleration's end -> decision); ${col("journal")} (decision -> record journaled); ${col("taint")} (journaled -> tainted)`,
      `expiry -> taint, ms: ${col("fromVisible")} (visible + toleration); ${col("fromCtl")} (the controller's own expiry: its first sight + toleration)`
    ].join("\n")
  }

  // Background API rate over a quiet window.
  const quietS = 10
  const q0 = metric((await ctl.get("/metrics")).body, "nodemend_controller_api_requests_total")
  await new Promise((r) => setTimeout(r, quietS * 1000))
  const q1 = metric((await ctl.get("/metrics")).body, "nodemend_controller_api_requests_total")
  const backgroundPerS = (q1 - q0) / quietS

  // Latency repairs: LATENCY_REPAIRS nodes (within the breaker budget) fail at once.
  const latencyNodes = names.slice(
    LATENCY_OFFSET,
    LATENCY_OFFSET + Math.min(LATENCY_REPAIRS, Math.ceil(NODES * 0.2))
  )
  const a0 = metric((await ctl.get("/metrics")).body, "nodemend_controller_api_requests_total")
  const l0 = Date.now()
  const expiry = new Map<string, number>()
  const sent = new Map<string, number>()
  const written = new Map<string, number>()
  const watcher = await watchVisible(`${TEST_RUN_LABEL}=${runId}`, new Set(latencyNodes))
  await pool(latencyNodes, CONCURRENCY, async (name) => {
    sent.set(name, Date.now())
    const n = await setKernel(name, "False")
    written.set(name, Date.now())
    const ltt = n.status?.conditions?.find((c) => c.type === "KernelReady")?.lastTransitionTime
    expiry.set(name, new Date(ltt ?? Date.now()).getTime() + TOLERATION_S * 1000)
  })
  await waitFor(
    "latency nodes tainted",
    async () => {
      const tainted = await firstEvents("Tainted")
      return latencyNodes.every((n) => tainted.has(n)) ? true : undefined
    },
    { timeoutMs: 120_000, intervalMs: 1000 }
  ).catch(() => log("not every latency node was tainted within 120 s"))
  watcher.stop()
  console.log(await stageLines(latencyNodes, expiry, sent, written, watcher.visible))
  if (LATENCY_ONLY) {
    const tainted = await firstEvents("Tainted")
    const lat = latencyNodes
      .filter((n) => tainted.has(n))
      .map((n) => (tainted.get(n)! - expiry.get(n)!) / 1000)
    const text = (await ctl.get("/metrics")).body
    const mean =
      metric(text, "nodemend_controller_decision_latency_seconds_sum") /
      metric(text, "nodemend_controller_decision_latency_seconds_count")
    console.log(
      [
        `scale: ${NODES} kwok nodes, ${PODS} pods (one pool), toleration ${TOLERATION_S} s; latency nodes ${LATENCY_OFFSET}..${LATENCY_OFFSET + latencyNodes.length - 1}`,
        `from lastTransitionTime + toleration, whole seconds, the write's floor and the bench's own patch included (${lat.length} of ${latencyNodes.length} repairs; controller's own histogram mean ${mean.toFixed(3)} s): p50 ${pct(lat, 50).toFixed(3)} s, p99 ${pct(lat, 99).toFixed(3)} s, max ${Math.max(...lat).toFixed(3)} s`,
        `owner proofs: ${metric(text, 'nodemend_controller_owner_proofs_total{asked="ahead"}')} with the cloud's answer asked ahead of the expiry, ${metric(text, 'nodemend_controller_owner_proofs_total{asked="decision"}')} asked at the decision`,
        `controller RSS max: ${maxRss.toFixed(0)} MiB`
      ].join("\n")
    )
    clearInterval(sampler)
    await ctl.kill("SIGTERM")
    if (process.env.CONTROLLER_LOG) writeFileSync(process.env.CONTROLLER_LOG, ctl.logs())
    return
  }
  await waitFor(
    "latency repairs completed",
    async () => {
      const body = (await ctl.get("/metrics")).body
      return metric(body, "nodemend_controller_repairs_completed_total") >= latencyNodes.length
        ? true
        : undefined
    },
    { timeoutMs: 600_000, intervalMs: 500 }
  )
  const repairSeconds = (Date.now() - l0) / 1000
  const a1 = metric((await ctl.get("/metrics")).body, "nodemend_controller_api_requests_total")
  const perRepair = (a1 - a0 - backgroundPerS * repairSeconds) / latencyNodes.length
  const tainted = await firstEvents("Tainted")
  const lat = latencyNodes.filter((n) => tainted.has(n)).map((n) => (tainted.get(n)! - expiry.get(n)!) / 1000)
  const text = (await ctl.get("/metrics")).body
  const latencyPeak = phasePeak()
  const provenAhead = metric(text, 'nodemend_controller_owner_proofs_total{asked="ahead"}')
  const provenAtDecision = metric(text, 'nodemend_controller_owner_proofs_total{asked="decision"}')
  const internalMean =
    metric(text, "nodemend_controller_decision_latency_seconds_sum") /
    metric(text, "nodemend_controller_decision_latency_seconds_count")

  // Burst: FAILURES simultaneous failures in the pool (the replaced latency nodes are back, so the pool is NODES).
  const burst = names.slice(latencyNodes.length, latencyNodes.length + FAILURES)
  const allowed = Math.ceil(0.2 * NODES)
  const startedBefore = metric((await ctl.get("/metrics")).body, "nodemend_controller_repairs_started_total")
  await pool(burst, CONCURRENCY, (name) => setKernel(name, "False"))
  await new Promise((r) => setTimeout(r, (TOLERATION_S + 15) * 1000))
  const started = await firstEvents("RepairStarted")
  const body = (await ctl.get("/metrics")).body
  // The controller's own counter: events may be dropped under a burst (bounded backlog), repairs may not.
  const acted = metric(body, "nodemend_controller_repairs_started_total") - startedBefore
  const withEvent = burst.filter((n) => started.has(n)).length
  const blocked = /nodemend_controller_breaker_open\{pool="[^"]+"\} 1/.test(body)
  // Follow the burst's repairs to their end (or the bound), RSS still sampled.
  const completedBefore = latencyNodes.length
  const f0 = Date.now()
  let burstCompleted = 0
  let snapshotTaken = false
  while (Date.now() - f0 < BURST_FOLLOW_S * 1000) {
    const m = (await ctl.get("/metrics")).body
    burstCompleted = metric(m, "nodemend_controller_repairs_completed_total") - completedBefore
    if (HEAP_SNAPSHOT && !snapshotTaken && burstCompleted >= acted / 3) {
      log(`heap snapshot (SIGUSR2) at ${rssMiB(pid).toFixed(0)} MiB RSS`)
      ctl.proc.kill("SIGUSR2")
      snapshotTaken = true
    }
    if (burstCompleted >= acted) break
    await new Promise((r) => setTimeout(r, 1000))
  }
  const burstSeconds = (Date.now() - f0) / 1000 + TOLERATION_S + 15
  const burstPeak = phasePeak()
  const end = (await ctl.get("/metrics")).body
  maxRss = Math.max(maxRss, rssMiB(pid))
  clearInterval(sampler)

  const heapMiB = metric(end, "nodemend_controller_nodejs_heap_used_bytes") / 1048576
  const lines = [
    `scale: ${NODES} kwok nodes, ${PODS} pods (one pool), toleration ${TOLERATION_S} s`,
    `controller RSS max: ${maxRss.toFixed(0)} MiB (goal <= 256 MiB; at the peak ${peakSplit}); V8 heap in use at the end: ${heapMiB.toFixed(0)} MiB`,
    `RSS by phase: at sync ${syncRss.toFixed(0)} MiB (max while syncing ${syncPeak.toFixed(0)}), latency repairs max ${latencyPeak.toFixed(0)}, burst max ${burstPeak.toFixed(0)} MiB`,
    `from lastTransitionTime + toleration, whole seconds, the write's floor and the bench's own patch included (${lat.length} repairs, from the Tainted events' eventTime; controller's own histogram mean ${internalMean.toFixed(3)} s): p50 ${pct(lat, 50).toFixed(3)} s, p99 ${pct(lat, 99).toFixed(3)} s, max ${Math.max(...lat).toFixed(3)} s`,
    `owner proofs: ${provenAhead} with the cloud's answer asked ahead of the expiry, ${provenAtDecision} asked at the decision`,
    `API requests per repair (taint, drain ${Math.round(PODS / NODES)} pods, terminate, replace; background ${backgroundPerS.toFixed(1)}/s subtracted): ${perRepair.toFixed(1)}`,
    `${latencyNodes.length} repairs completed in ${repairSeconds.toFixed(1)} s`,
    `burst: ${FAILURES} simultaneous failures in a pool of ${NODES} -> acted on ${acted} (allowed ceil(20%) = ${allowed}; breaker open: ${blocked}; ${withEvent} with a RepairStarted event, ${metric(end, "nodemend_controller_events_dropped_total")} events dropped); ${burstCompleted} of them completed within ${burstSeconds.toFixed(0)} s of the failures`,
    leaseLine(end),
    endLine(ctl)
  ]
  console.log(lines.join("\n"))
  await ctl.kill("SIGTERM")
  if (process.env.CONTROLLER_LOG) writeFileSync(process.env.CONTROLLER_LOG, ctl.logs())
  if (process.env.KEEP !== "1") {
    log("cleaning up")
    // Pods first, without grace: pods of deleted kwok nodes would otherwise wait for the pod GC (about 10/s).
    await core.deleteCollectionNamespacedPod({ namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined)
    await deleteRunNodes(core)
    await deleteNamespace(core, ns)
    await waitFor(
      "bench pods gone",
      async () =>
        (await core.listNamespacedPod({ namespace: ns, limit: 1 })).items.length === 0 ? true : undefined,
      { timeoutMs: 900_000, intervalMs: 2000 }
    ).catch(() => log("pods still terminating; the namespace deletion finishes them"))
  }
}

/** The controller under measurement, once started: a failed run still says how it ended and keeps its log. */
let controller: ControllerProcess | undefined

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    if (controller !== undefined) {
      console.error(
        `${endLine(controller)}; its last log lines:\n${controller.logs().split("\n").slice(-30).join("\n")}`
      )
      if (process.env.CONTROLLER_LOG) writeFileSync(process.env.CONTROLLER_LOG, controller.logs())
    }
    process.exit(1)
  }
)
