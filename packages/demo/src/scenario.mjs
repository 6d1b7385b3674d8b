/**
 * `npm run demo:scenario`: the stories operators care about, on the same fleet as `npm start` (own pools and
 * namespace, so it can share a cluster). Every step waits for the real thing to happen (a Node condition, an
 * Event of the controller, a taint, a ConfigMap of its journal, an instance gone, a replacement Ready) and the
 * run exits non-zero at the first step that does not. Faults are written where their source writes them.
 *   1. XID 79 on a GPU node -> condition -> toleration -> taint -> PDB-respecting drain -> termination ->
 *      replacement Ready.
 *   2. 4 of 10 general nodes fail (2, then 2 while the first repairs run) -> the breaker holds the 2 later ones
 *      and says why -> they are repaired once the first replacements are Ready. (The breaker is all-or-nothing:
 *      4 failing within one toleration window would hold all 4; that is what it is for.)
 *   3. a zonal shift away from one zone -> stand-down (nothing happens to a failing node there) -> shift
 *      cancelled -> its repair runs.
 *   4. a node with the do-not-repair annotation -> never repaired, and the view says so.
 */
import { join } from "node:path"
import { PatchStrategy, PolicyV1Api, setHeaderOptions } from "@kubernetes/client-node"
import { DO_NOT_REPAIR_ANNOTATION, REPAIR_TAINT_KEY, ZONE_LABEL } from "@nodemend/reason-codes/keys"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { faultNamed, writeFault } from "./faults.mjs"
import { condition, isReady, POOL_LABEL, REGION, sleep, startFleet, TOLERATIONS, waitFor } from "./fleet.mjs"
import { takeSnapshot } from "./snapshot.mjs"
import { render } from "./view.mjs"

const t0 = Date.now()
const timeline = []
const since = (t) => `${((Date.now() - t) / 1000).toFixed(1)} s`
const mark = (story, what) => {
  const t = (Date.now() - t0) / 1000
  timeline.push({ t, story, what })
  console.log(`[${t.toFixed(1).padStart(6)}s] ${story}  ${what}`)
}

const fleet = await startFleet({
  say: (m) => mark("setup", m),
  prefix: `s${Date.now().toString(36)}-`,
  namespace: `nodemend-scenario-${Date.now().toString(36)}`,
  dir: join(REPO_ROOT, ".nodemend", "scenario")
})
const { core, namespace } = fleet
const [GENERAL, GPU] = fleet.pools.map((p) => p.name)
const workNs = `${namespace}-work`

const readNode = (name) => core.readNode({ name }).catch(() => undefined)
const poolNodes = async (pool) =>
  (await core.listNode({ labelSelector: `${POOL_LABEL}=${pool}` })).items.filter(
    (n) => !n.metadata.deletionTimestamp
  )
const events = async (node, reason) =>
  (
    await core.listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${node}` })
  ).items.filter((e) => e.reason === reason)
const hasEvent = async (node, reason) => (await events(node, reason))[0]
const journal = (node) =>
  core
    .readNamespacedConfigMap({ namespace, name: `nodemend-repair-${node}` })
    .then((cm) => JSON.parse(cm.data?.record ?? "{}"))
    .catch(() => undefined)
const tainted = (node) => (node?.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY)
const inject = (node, name) => {
  const host = fleet.state.hosts[node]
  if (!host) throw new Error(`${node} has no agent (no simulated host) to inject into`)
  writeFault(host, faultNamed(name))
  return Date.now()
}
/** Waits for a Ready node in `pool` that is not one of `known`; returns it. */
const replacementIn = (pool, known, what, timeoutMs = 300_000) =>
  waitFor(
    what,
    async () => (await poolNodes(pool)).find((n) => isReady(n) && !known.has(n.metadata.name)),
    timeoutMs,
    500
  )
const gone = (node, what, timeoutMs = 240_000) =>
  waitFor(what, async () => (await readNode(node)) === undefined, timeoutMs, 500)
const failedCondition = (node, type, reason, what) =>
  waitFor(
    what,
    async () => {
      const c = condition(await readNode(node), type)
      return c?.status === "False" && c.reason === reason ? c : undefined
    },
    60_000,
    100
  )

/** Two pods of `app` bound to `node` and a PodDisruptionBudget (minAvailable 1) over them; Running before it returns. */
const protectedWorkload = async (node, app) => {
  const pods = [0, 1].map((i) => `${app}-${i}`)
  for (const name of pods)
    await core.createNamespacedPod({
      namespace: workNs,
      body: {
        metadata: { name, labels: { app } },
        spec: {
          nodeName: node,
          tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" }],
          containers: [{ name: app, image: `${app}:demo` }]
        }
      }
    })
  await fleet.kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
    namespace: workNs,
    body: { metadata: { name: app }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } }
  })
  await waitFor(`${app} pods Running`, async () => {
    const running = (await core.listNamespacedPod({ namespace: workNs, labelSelector: `app=${app}` })).items
    return running.filter((p) => p.status?.phase === "Running").length === 2
  })
}
/** Pods of `app` not yet deleted. */
const podsLeft = async (app) =>
  (await core.listNamespacedPod({ namespace: workNs, labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata.deletionTimestamp
  ).length

const storyGpu = async () => {
  const S = "1 xid79   "
  const nodes = await poolNodes(GPU)
  const known = new Set(nodes.map((n) => n.metadata.name))
  const victim = nodes[0].metadata.name
  await protectedWorkload(victim, "trainer")
  mark(S, `${victim}: 2 trainer pods Running, PDB minAvailable 1`)
  const at = inject(victim, "xid79")
  mark(S, "kernel log: NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.")
  await failedCondition(
    victim,
    "AcceleratedHardwareReady",
    "NvidiaXID79Error",
    "AcceleratedHardwareReady=False"
  )
  mark(S, `AcceleratedHardwareReady=False NvidiaXID79Error, ${since(at)} after the line`)
  await waitFor("RepairStarted after the toleration", () => hasEvent(victim, "RepairStarted"), 60_000)
  mark(
    S,
    `toleration (${TOLERATIONS.AcceleratedHardwareReady} s) over: RepairStarted, ${since(at)} after the fault`
  )
  await waitFor(
    "the repair taint",
    async () => tainted(await readNode(victim)) || (await readNode(victim)) === undefined
  )
  mark(S, `tainted ${REPAIR_TAINT_KEY}:NoSchedule`)
  await waitFor("the first eviction", async () => (await podsLeft("trainer")) <= 1, 60_000)
  mark(S, "drain: trainer evicted; the PDB (minAvailable 1) holds the other")
  await waitFor("the drain to finish", async () => (await podsLeft("trainer")) === 0, 90_000)
  const forced = await hasEvent(victim, "DrainForced").catch(() => undefined)
  mark(S, `drain done${forced ? " (the last pod forced at the 20 s deadline: DrainForced)" : ""}`)
  await gone(victim, "the instance terminated and its Node removed")
  mark(S, `TerminateInstances: ${victim} gone, ${since(at)} after the fault`)
  const fresh = await replacementIn(GPU, known, "the replacement Ready")
  mark(S, `replacement ${fresh.metadata.name} Ready (${fresh.spec.providerID}), fault -> Ready ${since(at)}`)
}

const storyBreaker = async () => {
  const S = "2 breaker "
  const nodes = (await poolNodes(GENERAL)).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
  const known = new Set(nodes.map((n) => n.metadata.name))
  const inZone = (z) =>
    nodes.filter((n) => n.metadata.labels[ZONE_LABEL] === `${REGION}${z}`).map((n) => n.metadata.name)
  const [g1, g2] = inZone("a")
  const [g3, g4] = inZone("b")
  // Their workloads' PDBs keep g1 and g2 draining (to the 20 s deadline) while g3 and g4 wait out their toleration.
  await protectedWorkload(g1, "web")
  await protectedWorkload(g2, "api")
  mark(S, `${g1}, ${g2}: 2 pods each under a PDB (minAvailable 1)`)
  const at = Date.now()
  for (const n of [g1, g2]) inject(n, "pids-exhausted")
  mark(S, `kubelet journal 'fork/exec ...: resource temporarily unavailable' on ${g1}, ${g2}`)
  for (const n of [g1, g2])
    await failedCondition(n, "KernelReady", "ForkFailedOutOfPIDs", `${n} KernelReady=False`)
  mark(S, `KernelReady=False ForkFailedOutOfPIDs on both, ${since(at)}`)
  for (const n of [g1, g2]) await waitFor(`RepairStarted on ${n}`, () => hasEvent(n, "RepairStarted"), 60_000)
  mark(
    S,
    `toleration (${TOLERATIONS.KernelReady} s) over: RepairStarted on ${g1}, ${g2} (2 of 10 unhealthy, allowed 2)`
  )
  for (const n of [g3, g4]) inject(n, "ipamd-no-token")
  mark(S, `ipamd log 'Failed to check API server connectivity ...' x3 on ${g3}, ${g4}: 4 of 10 now failing`)
  for (const n of [g3, g4])
    await failedCondition(n, "NetworkingReady", "IPAMDNotReady", `${n} NetworkingReady=False`)
  const blocked = await waitFor(`RepairBlocked on ${g3}`, () => hasEvent(g3, "RepairBlocked"), 60_000)
  await waitFor(`RepairBlocked on ${g4}`, () => hasEvent(g4, "RepairBlocked"), 30_000)
  for (const n of [g3, g4])
    if (tainted(await readNode(n)) || (await journal(n)))
      throw new Error(`${n} was touched while the breaker held it`)
  mark(S, `breaker holds ${g3}, ${g4} (not tainted, no journal record): "${blocked.message}"`)
  const view = render(await takeSnapshot(fleet), { width: 400 }).find((l) => l.includes(g3)) ?? ""
  if (!view.includes("HELD by breaker")) throw new Error(`the view does not say ${g3} is held: ${view}`)
  mark(S, `view: ${view.trim().replace(/\s+/g, " ")}`)
  await Promise.all([
    (async () => {
      for (const n of [g1, g2]) await gone(n, `${n} terminated`, 300_000)
      mark(S, `${g1}, ${g2} drained, terminated and removed, ${since(at)}`)
    })(),
    (async () => {
      const first = await replacementIn(GENERAL, known, "the first replacement Ready", 300_000)
      mark(S, `first replacement ${first.metadata.name} Ready, ${since(at)}`)
    })(),
    (async () => {
      for (const n of [g3, g4])
        await waitFor(
          `RepairStarted on ${n} once the count dropped`,
          () => hasEvent(n, "RepairStarted"),
          150_000
        )
      mark(S, `unhealthy count dropped: RepairStarted on ${g3}, ${g4}, ${since(at)}`)
    })()
  ])
  for (const n of [g3, g4]) await gone(n, `${n} terminated`, 300_000)
  await waitFor(
    "10 Ready general nodes again, 4 of them replacements",
    async () => {
      const now = await poolNodes(GENERAL)
      return now.filter(isReady).length >= 10 && now.filter((n) => !known.has(n.metadata.name)).length >= 4
    },
    150_000,
    500
  )
  mark(S, `all 4 replaced, pool ${GENERAL} back to 10 Ready, ${since(at)}`)
}

const storyZonalShift = async () => {
  const S = "3 shift   "
  const zone = `${REGION}c`
  const victim = (await poolNodes(GENERAL)).find(
    (n) => n.metadata.labels[ZONE_LABEL] === zone && isReady(n) && fleet.state.hosts[n.metadata.name]
  ).metadata.name
  const res = await fetch(`${fleet.cloudUrl}/admin/zonal-shifts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ awayFrom: "usw2-az3", expiresInMinutes: 30, comment: "nodemend scenario" })
  })
  if (!res.ok) throw new Error(`zonal shift: HTTP ${res.status} ${await res.text()}`)
  const shift = await res.json()
  mark(S, `ARC zonal shift ${shift.zonalShiftId} away from ${zone} (usw2-az3)`)
  // The controller sees the shift at its next refresh (slower under load): wait for its stand-down gauge.
  await waitFor(
    "the controller to see the zonal shift",
    async () =>
      /nodemend_controller_zonal_shift_stand_down\{[^}]*cause="shift"[^}]*\} 1\b/.test(
        await (await fetch(fleet.state.metricsUrl)).text()
      ),
    60_000,
    500
  )
  mark(S, "the controller sees the shift (zonal_shift_stand_down{cause=shift} 1)")
  const at = inject(victim, "pids-exhausted")
  mark(S, `kubelet journal fork failure on ${victim} in ${zone}`)
  await failedCondition(victim, "KernelReady", "ForkFailedOutOfPIDs", `${victim} KernelReady=False`)
  const sd = await waitFor("RepairStandDown", () => hasEvent(victim, "RepairStandDown"), 60_000)
  mark(S, `stand-down: "${sd.message}"`)
  await sleep(10_000)
  if ((await hasEvent(victim, "RepairStarted")) || tainted(await readNode(victim)) || (await journal(victim)))
    throw new Error(`${victim} was repaired during the zonal shift`)
  mark(S, `10 s later: still no taint, no journal record, no termination (${since(at)} after the fault)`)
  const cancel = await fetch(
    `${fleet.cloudUrl}/admin/zonal-shifts/${encodeURIComponent(shift.zonalShiftId)}`,
    { method: "DELETE" }
  )
  if (!cancel.ok) throw new Error(`cancel zonal shift: HTTP ${cancel.status}`)
  const cancelledAt = Date.now()
  mark(S, "zonal shift cancelled")
  await waitFor("RepairStarted after the shift", () => hasEvent(victim, "RepairStarted"), 60_000)
  mark(S, `repair resumed: RepairStarted ${since(cancelledAt)} after the cancel`)
  await gone(victim, "the instance terminated", 300_000)
  mark(S, `${victim} terminated and removed, ${since(cancelledAt)} after the cancel`)
}

const storyVeto = async () => {
  const S = "4 veto    "
  const victim = (await poolNodes(GENERAL)).find(
    (n) => n.metadata.labels[ZONE_LABEL] === `${REGION}a` && isReady(n) && fleet.state.hosts[n.metadata.name]
  ).metadata.name
  await core.patchNode(
    { name: victim, body: { metadata: { annotations: { [DO_NOT_REPAIR_ANNOTATION]: "true" } } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
  )
  mark(S, `${victim}: annotated ${DO_NOT_REPAIR_ANNOTATION}=true`)
  const at = inject(victim, "ipamd-no-token")
  await failedCondition(victim, "NetworkingReady", "IPAMDNotReady", `${victim} NetworkingReady=False`)
  mark(S, `NetworkingReady=False IPAMDNotReady, ${since(at)} after the ipamd lines`)
  const vetoed = await waitFor("RepairVetoed", () => hasEvent(victim, "RepairVetoed"), 60_000)
  mark(S, `RepairVetoed: "${vetoed.message}"`)
  await sleep(15_000)
  const node = await readNode(victim)
  if (!node || tainted(node) || (await hasEvent(victim, "RepairStarted")) || (await journal(victim)))
    throw new Error(`${victim} was touched despite the veto`)
  const view = render(await takeSnapshot(fleet), { width: 400 }).find((l) => l.includes(victim)) ?? ""
  if (!view.includes("VETOED")) throw new Error(`the view does not say ${victim} is vetoed: ${view}`)
  mark(S, `${since(at)} after the fault: not tainted, no repair; view: ${view.trim().replace(/\s+/g, " ")}`)
}

// As in `npm start`: replacements get their agents too.
const agentSync = setInterval(() => fleet.syncAgents().catch(() => undefined), 3000)
let failed
try {
  await core.createNamespace({ body: { metadata: { name: workNs, labels: { "nodemend.io/demo": "true" } } } })
  const results = await Promise.allSettled([storyGpu(), storyBreaker()])
  failed = results.find((r) => r.status === "rejected")?.reason
  if (!failed) {
    const more = await Promise.allSettled([storyZonalShift(), storyVeto()])
    failed = more.find((r) => r.status === "rejected")?.reason
  }
} catch (e) {
  failed = e
}
clearInterval(agentSync)
await fleet.stop()
for (const ns of [workNs, namespace]) await core.deleteNamespace({ name: ns }).catch(() => undefined)

console.log(`\ntimeline (${((Date.now() - t0) / 1000).toFixed(1)} s in all)`)
for (const e of timeline.filter((e) => e.story !== "setup"))
  console.log(`  ${e.t.toFixed(1).padStart(6)}s  ${e.story} ${e.what}`)
if (failed) {
  console.error(`\nscenario FAILED: ${failed?.message ?? failed} (logs in ${fleet.dir}/logs)`)
  process.exit(1)
}
console.log("\nscenario passed: every step happened")
process.exit(0)
