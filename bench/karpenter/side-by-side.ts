/**
 * Karpenter's own node repair and nodemend side by side (issue #16), in one cluster run, with the same faults at the
 * same moment and equal tolerations. Prints figures, asserts nothing.
 *
 * Karpenter: the real Karpenter of the local cluster (kwok provider v1.15, FEATURE_GATES=NodeRepair=true) repairs its
 * NodePool on its own RepairPolicy `KWOKUnhealthy=True`, 30 s toleration, 45 s terminationGracePeriod (both fixed by
 * the provider). nodemend: the shipped controller bundle (deployed V8 flags) in a child process, watching only its
 * own NodePool (`karpenter.sh/nodepool=<pool>`), policy `KernelReady=False` with tolerationSeconds 30, capacity first
 * through a NodeClaim, in-flight budget from the NodePool's disruption budgets (Karpenter's default 10%: 1 of 10).
 * Both pools: 10 Nodes, a Deployment of 10 pause pods (one per Node).
 *
 *   A. one Node of each pool fails; PDB minAvailable = 10 on each workload (no voluntary disruption allowed).
 *      nodemend's drain: deadline 120 s, onDeadline wait. At fault + PDB_RELAX_S (default 100 s, after Karpenter's
 *      45 s TGP has run out) the bench relaxes both PDBs to minAvailable 9, as an operator would.
 *      Figures: fault -> replacement Ready, pod downtime (old pod's deletion seen -> its successor Running), whether
 *      the old pod left before the PDB allowed it, node gone.
 *   B/C/D. the breaker: 2, 3 and 10 of 10 Nodes fail at once in each pool (PDBs deleted); repaired / held / time to
 *      the first replacement Ready and the first old Node deleted, the breaker's Events.
 *   RSS of both controllers (Karpenter's pid from the cluster's pids dir; the nodemend child), sampled every 500 ms.
 *   E. nodemend's AWS path against the fake cloud (in this process, composed as main.ts composes it), capacity first:
 *      a standalone instance (RunInstances replacement) and an Auto Scaling group member (group grown by one),
 *      KernelReady=False with the same 30 s toleration -> replacement Node Ready.
 *
 * Run: ./node_modules/.bin/node --conditions=source bench/karpenter/side-by-side.ts
 * Starts its own cluster with Karpenter in .nodemend/bench-kr (stopped at the end) unless NODEMEND_KUBECONFIG is set.
 * Env: PDB_RELAX_S (100), SKIP_AWS=1, NODEMEND_LOG=<file> keeps the nodemend controller's log.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  type CoreV1Event,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
  Watch
} from "@kubernetes/client-node"

const REPO = fileURLToPath(new URL("../..", import.meta.url))
const NODE_BIN = join(REPO, "node_modules/.bin/node")
const STATE_DIR = join(REPO, ".nodemend/bench-kr")
const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d)
const PDB_RELAX_S = env("PDB_RELAX_S", 100)
const POOL_SIZE = 10
const TOLERATION_S = 30

const T0 = Date.now()
const log = (msg: string) =>
  process.stderr.write(`[bench +${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// --- the cluster: our own unless NODEMEND_KUBECONFIG names one ---------------------------------------------------
let ownCluster = false
if (process.env.NODEMEND_KUBECONFIG === undefined) {
  log(`starting a cluster with Karpenter in ${STATE_DIR}`)
  execFileSync(NODE_BIN, [join(REPO, "tools/cluster/cluster.mjs"), "up", "--state-dir", STATE_DIR], {
    stdio: ["ignore", "inherit", "inherit"]
  })
  process.env.NODEMEND_KUBECONFIG = join(STATE_DIR, "kubeconfig")
  ownCluster = true
}
const kubeconfig = process.env.NODEMEND_KUBECONFIG
const karpenterPidFile = join(dirname(kubeconfig), "pids/karpenter.pid")
if (!existsSync(karpenterPidFile)) throw new Error(`no Karpenter pid file at ${karpenterPidFile}`)
const karpenterPid = Number(readFileSync(karpenterPidFile, "utf8").trim())

// Imported after NODEMEND_KUBECONFIG is set (the harness and the fake-cloud support read it).
const H = await import("@nodemend/cluster-harness")
const CP = await import("../../packages/repair-controller/test/integration/controllerProcess.ts")
const { kc, core, policy } = H.clients(kubeconfig)
const { custom, apps } = H.karpenterClients(kc)

// --- observation: Nodes and Pods through watches, times taken when seen --------------------------------------------
interface NodeSeen {
  pool: string
  firstSeen: number
  readyAt?: number
  deletionAt?: number
  goneAt?: number
  taints: Map<string, number>
}
interface PodSeen {
  node?: string
  app: string
  createdSeen: number
  runningAt?: number
  deletionAt?: number
  goneAt?: number
}
const nodes = new Map<string, NodeSeen>()
const pods = new Map<string, PodSeen>()

const launched = (n: V1Node) =>
  (n.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True") &&
  !(n.spec?.taints ?? []).some((t) => t.key === H.UNREGISTERED_TAINT)

const onNode = (type: string, n: V1Node) => {
  const name = n.metadata?.name ?? ""
  const now = Date.now()
  let s = nodes.get(name)
  if (s === undefined) {
    s = { pool: n.metadata?.labels?.[H.NODEPOOL_LABEL] ?? "", firstSeen: now, taints: new Map() }
    nodes.set(name, s)
  }
  if (s.readyAt === undefined && launched(n)) s.readyAt = now
  if (s.deletionAt === undefined && n.metadata?.deletionTimestamp) s.deletionAt = now
  for (const t of n.spec?.taints ?? []) if (!s.taints.has(t.key)) s.taints.set(t.key, now)
  if (type === "DELETED" && s.goneAt === undefined) {
    s.goneAt = now
    s.deletionAt ??= now
  }
}
const onPod = (type: string, p: V1Pod) => {
  const name = p.metadata?.name ?? ""
  const now = Date.now()
  let s = pods.get(name)
  if (s === undefined) {
    s = { app: p.metadata?.labels?.app ?? "", createdSeen: now }
    pods.set(name, s)
  }
  if (p.spec?.nodeName) s.node = p.spec.nodeName
  if (s.runningAt === undefined && p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)
    s.runningAt = now
  if (s.deletionAt === undefined && p.metadata?.deletionTimestamp) s.deletionAt = now
  if (type === "DELETED" && s.goneAt === undefined) {
    s.goneAt = now
    s.deletionAt ??= now
  }
}

let watching = true
const keepWatching = async <T>(
  kcfg: KubeConfig,
  path: string,
  query: Record<string, string>,
  handler: (type: string, obj: T) => void
) => {
  const w = new Watch(kcfg)
  while (watching) {
    await new Promise<void>((resolve) => {
      w.watch(
        path,
        { ...query, allowWatchBookmarks: "false" },
        (type, obj) => handler(type, obj as T),
        () => resolve()
      ).catch(() => resolve())
    })
    if (watching) await sleep(200)
  }
}

// --- RSS sampling --------------------------------------------------------------------------------------------------
const rssMiB = (pid: number): number | undefined => {
  try {
    const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kib === undefined ? undefined : Number(kib) / 1024
  } catch {
    return undefined
  }
}
interface RssWindow {
  karpenter: number[]
  nodemend: number[]
}
const rss = new Map<string, RssWindow>()
let rssPhase = "setup"
let nodemendPid: number | undefined
const rssTimer = setInterval(() => {
  let w = rss.get(rssPhase)
  if (w === undefined) {
    w = { karpenter: [], nodemend: [] }
    rss.set(rssPhase, w)
  }
  const k = rssMiB(karpenterPid)
  if (k !== undefined) w.karpenter.push(k)
  const n = nodemendPid === undefined ? undefined : rssMiB(nodemendPid)
  if (n !== undefined) w.nodemend.push(n)
}, 500)

// --- the scenario ---------------------------------------------------------------------------------------------------
const ns = await H.createTestNamespace(core, "kr-side")
const KR = `kr-karp-${H.RUN_ID}`.slice(0, 40)
const NM = `kr-nm-${H.RUN_ID}`.slice(0, 40)
const POOLS = [KR, NM] as const
const label = (pool: string) => (pool === KR ? "Karpenter" : "nodemend")

void keepWatching<V1Node>(
  kc,
  "/api/v1/nodes",
  { labelSelector: `${H.NODEPOOL_LABEL} in (${KR},${NM})` },
  onNode
)
void keepWatching<V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, {}, onPod)

let nodemend: Awaited<ReturnType<typeof CP.startControllerProcess>> | undefined
const cleanup = async () => {
  watching = false
  clearInterval(rssTimer)
  if (nodemend) {
    if (process.env.NODEMEND_LOG) writeFileSync(process.env.NODEMEND_LOG, nodemend.logs())
    await nodemend.kill("SIGTERM").catch(() => {})
  }
  for (const pool of POOLS)
    await H.deleteNodePool({ custom, apps, core }, pool, {
      deployment: { namespace: ns, name: pool },
      timeoutMs: 180_000
    }).catch((e) => log(`cleanup of ${pool}: ${e}`))
  await H.deleteNamespace(core, ns).catch(() => {})
  if (ownCluster) {
    log("stopping the cluster")
    execFileSync(NODE_BIN, [join(REPO, "tools/cluster/cluster.mjs"), "down", "--state-dir", STATE_DIR], {
      stdio: ["ignore", "inherit", "inherit"]
    })
  }
}

const pdbName = (pool: string) => `pdb-${pool}`.slice(0, 63)
const createPdb = (pool: string, minAvailable: number) =>
  policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: {
      metadata: { name: pdbName(pool) },
      spec: { minAvailable, selector: { matchLabels: { app: pool } } }
    }
  })
const setPdb = (pool: string, minAvailable: number) =>
  policy.patchNamespacedPodDisruptionBudget(
    { name: pdbName(pool), namespace: ns, body: { spec: { minAvailable } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
  )
const deletePdb = (pool: string) =>
  policy.deleteNamespacedPodDisruptionBudget({ name: pdbName(pool), namespace: ns }).catch(() => {})

/** Sets each pool's fault condition on `targets` at one instant (same lastTransitionTime, patched in parallel). */
const fault = async (targets: Record<string, string[]>, healthy = false) => {
  const at = new Date()
  await Promise.all(
    Object.entries(targets).flatMap(([pool, names]) =>
      names.map((name) =>
        H.patchNodeCondition(
          core,
          name,
          pool === KR
            ? {
                type: "KWOKUnhealthy",
                status: healthy ? "False" : "True",
                reason: healthy ? "Healthy" : "BenchFault",
                message: "side-by-side bench",
                lastHeartbeatTime: at,
                lastTransitionTime: at
              }
            : {
                type: "KernelReady",
                status: healthy ? "True" : "False",
                reason: healthy ? "KernelIsReady" : "ForkFailedOutOfPIDs",
                message: "side-by-side bench",
                lastHeartbeatTime: at,
                lastTransitionTime: at
              }
        )
      )
    )
  )
  return at.getTime()
}

/** Each repairer's veto on `targets`: Karpenter's `karpenter.sh/do-not-repair`, nodemend's `nodemend.io/do-not-repair`. */
const veto = (targets: Record<string, string[]>, on: boolean) =>
  Promise.all(
    Object.entries(targets).flatMap(([pool, names]) =>
      names.map((name) =>
        core.patchNode(
          {
            name,
            body: {
              metadata: {
                annotations: {
                  [pool === KR ? "karpenter.sh/do-not-repair" : "nodemend.io/do-not-repair"]: on
                    ? "true"
                    : null
                }
              }
            }
          },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
        )
      )
    )
  )

/** Most repairs in flight at once among `targets`: intervals from the repairer's taint to the old Node gone. */
const maxInFlight = (f: FaultFigures) => {
  const edges: [number, number][] = []
  f.targets.forEach((_, i) => {
    const start = f.tainted[i] ?? f.deleted[i]
    if (start === undefined) return
    edges.push([start, 1], [f.gone[i] ?? Number.POSITIVE_INFINITY, -1])
  })
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let cur = 0
  let max = 0
  for (const [, d] of edges) {
    cur += d
    max = Math.max(max, cur)
  }
  return max
}

/** The pool's Nodes now: launched, not deleting. */
const liveNodes = (pool: string) =>
  [...nodes.entries()]
    .filter(([, s]) => s.pool === pool && s.readyAt !== undefined && s.deletionAt === undefined)
    .map(([n]) => n)

/** NodeClaims the bench deleted because a repair left a pool above its size (Karpenter's provisioner launched one more). */
const surplusRemoved: { phase: string; pool: string; claim: string }[] = []

/**
 * Waits until both pools are back to 10 launched NodeClaims with 10 Running pods and nothing deleting. A pool left
 * with more (an extra NodeClaim launched for a pod that was briefly Pending during a repair; consolidation is off
 * here) gets its NodeClaims without a workload pod deleted, and that is recorded: the breaker phases need 10.
 */
const settle = async (what: string) => {
  await H.waitFor(
    `${what}: pools settled`,
    async () => {
      const ps = (await core.listNamespacedPod({ namespace: ns })).items
      if (ps.length !== 2 * POOL_SIZE) return undefined
      if (!ps.every((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)) return undefined
      const nodeList = (await core.listNode({ labelSelector: `${H.NODEPOOL_LABEL} in (${KR},${NM})` })).items
      if (nodeList.some((n) => n.metadata?.deletionTimestamp || !launched(n))) return undefined
      let ok = true
      for (const pool of POOLS) {
        const claims = (await H.listNodeClaims(custom, pool)).filter((c) => !c.metadata?.deletionTimestamp)
        if (claims.length < POOL_SIZE) ok = false
        if (claims.length > POOL_SIZE) {
          ok = false
          const busy = new Set(ps.map((p) => p.spec?.nodeName))
          for (const c of claims) {
            const node = c.status?.nodeName
            if (
              node !== undefined &&
              !busy.has(node) &&
              launched(nodeList.find((n) => n.metadata?.name === node) ?? {})
            ) {
              log(
                `${what}: pool ${pool} has ${claims.length} NodeClaims; deleting the empty ${c.metadata?.name}`
              )
              surplusRemoved.push({ phase: what, pool, claim: c.metadata?.name ?? "" })
              await H.deleteNodeClaim(custom, c.metadata?.name ?? "")
            }
          }
        }
      }
      return ok ? true : undefined
    },
    { timeoutMs: 240_000, intervalMs: 1000 }
  )
  await sleep(1000) // let the watches catch up
}

const eventsSince = async (since: number, reasons: string[]) => {
  const all: CoreV1Event[] = []
  for (const reason of reasons) {
    const l = await core.listEventForAllNamespaces({ fieldSelector: `reason=${reason}` })
    all.push(
      ...l.items.filter((e) => {
        const at = Date.parse(
          String(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? "")
        )
        return at >= since - 1000
      })
    )
  }
  return all
}

const s1 = (ms: number | undefined) => (ms === undefined ? "-" : `${(ms / 1000).toFixed(1)} s`)

interface FaultFigures {
  pool: string
  targets: string[]
  at: number
  /** Replacement Nodes: first seen after the fault, in order of Ready. */
  replacementsReady: number[]
  /** Per target: when seen tainted by its repairer (karpenter.sh/disrupted or nodemend.io/repair), deletion, gone. */
  tainted: (number | undefined)[]
  deleted: (number | undefined)[]
  gone: (number | undefined)[]
  /** Per target's workload pod: deletion seen, successor Running, downtime. */
  podDown: { deletion?: number; running?: number; downtime?: number }[]
}

const podsOnAtFault = new Map<string, string>() // node -> pod
const recordPodsOn = (targets: string[]) => {
  for (const t of targets) {
    const pod = [...pods.entries()].find(([, p]) => p.node === t && p.deletionAt === undefined)?.[0]
    if (pod !== undefined) podsOnAtFault.set(t, pod)
  }
}

const figures = (pool: string, targets: string[], at: number): FaultFigures => {
  const app = pool
  const replacementsReady = [...nodes.values()]
    .filter((s) => s.pool === pool && s.firstSeen >= at && s.readyAt !== undefined)
    .map((s) => (s.readyAt ?? 0) - at)
    .sort((a, b) => a - b)
  const repairTaint = pool === KR ? H.DISRUPTED_TAINT : "nodemend.io/repair"
  const rel = (t: number | undefined) => (t === undefined ? undefined : t - at)
  // Each target's workload pod, and its successor: pods of the app created after the old one's deletion began,
  // handed out in order of deletion, the earliest Running first.
  const olds = targets.map((t) => pods.get(podsOnAtFault.get(t) ?? ""))
  const order = olds
    .map((o, i) => ({ i, d: o?.deletionAt }))
    .filter((x): x is { i: number; d: number } => x.d !== undefined)
    .sort((a, b) => a.d - b.d)
  const oldNames = new Set(targets.map((t) => podsOnAtFault.get(t)))
  const claimed = new Set<string>()
  const podDown: FaultFigures["podDown"] = targets.map(() => ({}))
  for (const { i, d } of order) {
    const succ = [...pods.entries()]
      .filter(
        ([name, p]) =>
          p.app === app && !oldNames.has(name) && !claimed.has(name) && p.createdSeen >= d - 50 && p.runningAt
      )
      .sort((a, b) => (a[1].runningAt ?? 0) - (b[1].runningAt ?? 0))[0]
    if (succ) claimed.add(succ[0])
    const running = succ?.[1].runningAt
    podDown[i] = {
      deletion: d - at,
      ...(running === undefined ? {} : { running: running - at, downtime: running - d })
    }
  }
  return {
    pool,
    targets,
    at,
    replacementsReady,
    tainted: targets.map((t) => rel(nodes.get(t)?.taints.get(repairTaint))),
    deleted: targets.map((t) => rel(nodes.get(t)?.deletionAt)),
    gone: targets.map((t) => rel(nodes.get(t)?.goneAt)),
    podDown
  }
}

const out: string[] = []
const print = (line = "") => {
  out.push(line)
  console.log(line)
}

let nmConfigFile = ""
try {
  // Pools and workloads
  for (const pool of POOLS) {
    await H.createNodePool(custom, H.karpenterNodePool(pool, { nodes: POOL_SIZE + 4 }))
    await H.provisionNodes(apps, pool, POOL_SIZE, { namespace: ns })
  }
  log("waiting for 2 x 10 Karpenter Nodes")
  await settle("provisioning")
  log("pools ready")

  // nodemend's controller: the shipped bundle with the deployed V8 flags
  const nmConfig = {
    cloudProvider: "kwok",
    namespace: ns,
    nodeSelector: `${H.NODEPOOL_LABEL}=${NM}`,
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: TOLERATION_S }],
    drain: {
      deadlineSeconds: 120,
      onDeadline: "wait",
      evictionBackoffInitialMs: 200,
      evictionBackoffMaxMs: 2000
    },
    zonalShift: { refreshSeconds: 5 },
    breaker: { requeueSeconds: 5 },
    leaderElection: { enabled: false },
    kwok: { zonalShiftConfigMap: `shifts-${NM}` },
    replacement: { timeoutSeconds: 120 },
    resyncSeconds: 30
  }
  nmConfigFile = JSON.stringify(nmConfig)
  nodemend = await CP.startControllerProcess(kubeconfig, nmConfig, `bench-${H.RUN_ID}`, {
    bundle: true,
    nodeFlags: CP.deployedNodeFlags()
  })
  nodemendPid = nodemend.proc.pid
  const nm = nodemend
  await H.waitFor(
    "nodemend controller ready",
    async () => ((await nm.get("/readyz").catch(() => ({ status: 0 }))).status === 200 ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 500 }
  )
  rssPhase = "idle (10+10 nodes)"
  await sleep(10_000)

  // ---- A: one failure per pool, PDB allows no disruption ----
  rssPhase = "A: 1 failure + PDB"
  for (const pool of POOLS) await createPdb(pool, POOL_SIZE)
  await sleep(2000) // PDB status observed
  const aTargets = { [KR]: [liveNodes(KR)[0] ?? ""], [NM]: [liveNodes(NM)[0] ?? ""] }
  recordPodsOn([...Object.values(aTargets).flat()])
  log(`A: fault on ${JSON.stringify(aTargets)}`)
  const aAt = await fault(aTargets)
  // relax both PDBs once Karpenter's TGP (45 s after its NodeClaim deletion) has had time to run out
  await sleep(PDB_RELAX_S * 1000 - (Date.now() - aAt))
  const relaxAt = Date.now()
  log("A: relaxing both PDBs to minAvailable 9")
  for (const pool of POOLS) await setPdb(pool, POOL_SIZE - 1)
  await H.waitFor(
    "A: both failed Nodes gone",
    async () => Object.values(aTargets).every(([t]) => nodes.get(t ?? "")?.goneAt !== undefined),
    { timeoutMs: 180_000, intervalMs: 500 }
  ).catch((e) => log(String(e)))
  const aFig = POOLS.map((p) => figures(p, aTargets[p] ?? [], aAt))
  const aEvents = await eventsSince(aAt, [
    "EvictionBlocked",
    "DrainDeadlineExceeded",
    "DrainForced",
    "Drained"
  ])
  for (const pool of POOLS) await deletePdb(pool)
  await settle("A")

  // ---- B, C, D: the breaker ----
  interface BreakerRun {
    n: number
    figs: FaultFigures[]
    blocked: Record<string, number>
    /** nodemend's RepairHeld Events (a relapse hold comes before the breaker: decide/decide.ts). */
    relapseHeld: Record<string, number>
  }
  const breakerRuns: BreakerRun[] = []
  for (const [n, windowS] of [
    [2, 150],
    [3, 75],
    [10, 70]
  ] as const) {
    rssPhase = `breaker ${n}/10`
    const targets = { [KR]: liveNodes(KR).slice(0, n), [NM]: liveNodes(NM).slice(0, n) }
    recordPodsOn([...Object.values(targets).flat()])
    log(`breaker ${n}/10: fault`)
    const at = await fault(targets)
    // 2/10: until both repairs are through (or the window); 3/10 and 10/10: the whole window
    await H.waitFor(
      `breaker ${n}/10 window`,
      async () =>
        n === 2 &&
        POOLS.every((p) => (targets[p] ?? []).every((t) => nodes.get(t)?.goneAt !== undefined)) &&
        POOLS.every((p) => figures(p, targets[p] ?? [], at).replacementsReady.length >= n)
          ? true
          : undefined,
      { timeoutMs: windowS * 1000, intervalMs: 500 }
    ).catch(() => {})
    const figs = POOLS.map((p) => figures(p, targets[p] ?? [], at))
    const ev = await eventsSince(at, ["NodeRepairBlocked", "RepairBlocked", "RepairHeld"])
    const blocked: Record<string, number> = {}
    const relapseHeld: Record<string, number> = {}
    for (const pool of POOLS) {
      const names = new Set([...(targets[pool] ?? []), pool])
      const ofPool = ev.filter((e) => names.has(e.involvedObject?.name ?? ""))
      blocked[pool] = ofPool.filter((e) => e.reason !== "RepairHeld").length
      relapseHeld[pool] = ofPool.filter((e) => e.reason === "RepairHeld").length
    }
    breakerRuns.push({ n, figs, blocked, relapseHeld })
    if (n !== 2) {
      // Clear what is left so the pools are healthy again. The patches land a few ms apart, and once a pool's count
      // drops back within its breaker the nodes still unhealthy are due at once (nodemend decides them again at
      // once; Karpenter on its next pass): each repairer's own veto goes on first and comes off after.
      const left: Record<string, string[]> = {}
      for (const pool of POOLS)
        left[pool] = (targets[pool] ?? []).filter((t) => nodes.get(t)?.deletionAt === undefined)
      await veto(left, true)
      await fault(left, true)
      await sleep(3000)
      await veto(left, false)
    }
    await settle(`breaker ${n}/10`)
  }
  rssPhase = "after"

  // ---- E: nodemend's AWS path against the fake cloud ----
  const awsFigs = process.env.SKIP_AWS === "1" ? undefined : await (await import("./aws-path.ts")).run(core)

  // ---- report ----
  const rssMax = (phase: string, who: "karpenter" | "nodemend") => {
    const xs = rss.get(phase)?.[who] ?? []
    return xs.length === 0 ? "-" : `${Math.max(...xs).toFixed(1)}`
  }
  print(`\n## nodemend next to Karpenter's repair (${new Date().toISOString()})`)
  print(
    `pools of ${POOL_SIZE} kwok Nodes each (Karpenter v1.15 kwok provider launches both), 1 pause pod per Node; toleration ${TOLERATION_S} s on both`
  )
  print("\n### A. one failure per pool, PDB minAvailable 10 (relaxed to 9 at fault + " + `${PDB_RELAX_S} s)`)
  print("| | Karpenter (KWOKUnhealthy=True) | nodemend (KernelReady=False) |")
  print("|---|---|---|")
  const [ak, an] = aFig
  const row = (name: string, f: (x: FaultFigures) => string) =>
    print(`| ${name} | ${ak ? f(ak) : "-"} | ${an ? f(an) : "-"} |`)
  row("repair started (node tainted)", (x) => s1(x.tainted[0]))
  row("fault -> replacement Ready", (x) => s1(x.replacementsReady[0]))
  row("old pod deletion seen", (x) => s1(x.podDown[0]?.deletion))
  row("successor pod Running", (x) => s1(x.podDown[0]?.running))
  row("pod downtime", (x) => s1(x.podDown[0]?.downtime))
  row("old Node deletion started / Node gone", (x) => `${s1(x.deleted[0])} / ${s1(x.gone[0])}`)
  row("PDB honoured (pod left only after the relax at " + `${s1(relaxAt - aAt)})`, (x) => {
    const d = x.podDown[0]?.deletion
    return d === undefined
      ? "pod never left"
      : d + aAt >= relaxAt
        ? "yes"
        : "no (pod removed while PDB allowed 0)"
  })
  const evCount = (pool: string, reason: string) =>
    aEvents.filter(
      (e) => e.reason === reason && (aTargets[pool] ?? []).includes(e.involvedObject?.name ?? "")
    ).length
  row("nodemend drain events (EvictionBlocked / DrainForced / Drained)", (x) =>
    x.pool === KR
      ? "n/a"
      : `${evCount(x.pool, "EvictionBlocked")} / ${evCount(x.pool, "DrainForced")} / ${evCount(x.pool, "Drained")}`
  )

  print("\n### B-D. the breaker: N of 10 fail at once (no PDB)")
  print(
    "| N/10 | who | repaired (old Node deleted) | held (never tainted) | most in flight at once | new Nodes launched | fault -> first / last replacement Ready | fault -> first / last old Node deletion | breaker (and relapse hold) Events |"
  )
  print("|---|---|---|---|---|---|---|---|---|")
  for (const r of breakerRuns)
    for (const f of r.figs) {
      const deleted = f.deleted.filter((d) => d !== undefined).sort((a, b) => (a ?? 0) - (b ?? 0))
      const held = f.targets.filter((_, i) => f.tainted[i] === undefined && f.deleted[i] === undefined).length
      print(
        `| ${r.n}/10 | ${label(f.pool)} | ${deleted.length} | ${held} | ${maxInFlight(f)} | ${f.replacementsReady.length} | ${s1(f.replacementsReady[0])} / ${s1(f.replacementsReady.at(-1))} | ${s1(deleted[0])} / ${s1(deleted.at(-1))} | ${r.blocked[f.pool]} ${f.pool === KR ? "NodeRepairBlocked" : `RepairBlocked, ${r.relapseHeld[f.pool]} RepairHeld`} |`
      )
    }
  const b2 = breakerRuns[0]
  if (b2)
    for (const f of b2.figs)
      print(
        `2/10 ${label(f.pool)}: per target tainted ${f.tainted.map(s1).join(", ")}; deletion ${f.deleted.map(s1).join(", ")}; gone ${f.gone.map(s1).join(", ")}; pod downtime ${f.podDown.map((p) => s1(p.downtime)).join(", ")}`
      )

  print("\n### Controller RSS (MiB, max per phase)")
  print("| phase | Karpenter | nodemend |")
  print("|---|---|---|")
  for (const phase of rss.keys())
    if (phase !== "setup")
      print(`| ${phase} | ${rssMax(phase, "karpenter")} | ${rssMax(phase, "nodemend")} |`)

  if (awsFigs) {
    print("\n### E. nodemend's AWS path against the fake cloud, capacity first (toleration 30 s)")
    print("| owner | fault -> tainted | fault -> replacement Ready | fault -> old Node gone | launches |")
    print("|---|---|---|---|---|")
    for (const a of awsFigs)
      print(
        `| ${a.owner} | ${s1(a.tainted)} | ${s1(a.replacementReady)} | ${s1(a.oldGone)} | ${a.launches} |`
      )
  }
  for (const x of surplusRemoved)
    print(
      `surplus: after ${x.phase}, ${label(x.pool)}'s pool had an empty extra NodeClaim ${x.claim}; the bench deleted it`
    )
  print(`\nnodemend config: ${nmConfigFile}`)
  writeFileSync(join(REPO, ".nodemend/bench-kr-figures.md"), `${out.join("\n")}\n`)
} finally {
  await cleanup()
}
process.exit(0)
