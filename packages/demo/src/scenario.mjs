/**
 * `npm run demo:scenario`: the stories operators care about, on the same fleet as `npm start` (own pools and
 * namespace, so it can share a cluster). Every step waits for the real thing to happen (a Node condition, an
 * Event of the controller, a taint, a ConfigMap of its journal, an instance gone, a replacement Ready) and the
 * run exits non-zero at the first step that does not. Faults are written where their source writes them.
 *   1. XID 79 on a GPU node -> condition -> toleration -> taint -> PDB-respecting drain -> termination ->
 *      replacement Ready.
 *   1b. a DCGM policy violation (double-bit ECC) injected with `nodemend inject` on another GPU node -> the
 *      agent's DCGM callback -> AcceleratedHardwareReady=False NvidiaDoubleBitError -> repaired.
 *   2. 4 of 10 general nodes fail at once -> the breaker lets them through (general: maxUnhealthyPercent 40, 4 of
 *      10 allowed) and the in-flight budget (maxInFlight "2") repairs 2, queues the other 2 and says why
 *      (RepairQueued) -> they start as soon as one of the first two has succeeded (capacity first: its
 *      replacement Ready before its drain).
 *   3. a zonal shift away from one zone -> stand-down (nothing happens to a failing node there) -> shift
 *      cancelled -> its repair runs.
 *   4. a node with the do-not-repair annotation -> never repaired, and the view says so.
 *   5. what-if: the whole run is recorded as an operator would (`kubectl nodemend record`) and replayed under the
 *      demo controller's own config (`kubectl nodemend whatif -o json`): the replay repairs the nodes the
 *      controller repaired, at the same times (the zonal shift is not in a recording: that node sooner). The
 *      retirement of story 6 is added to the recording as a `scheduledEvent` line (the cloud's, not the Nodes'):
 *      the replay plans it as the controller did.
 *   6. EC2 schedules an instance-retirement on a GPU node (the fake cloud's admin API) -> RepairPlanned, the plan
 *      in `kubectl nodemend status` (from the controller's journal) -> RepairStarted at NotBefore - lead ->
 *      replaced, capacity first, before NotBefore; no condition on the Node was involved.
 */
import { spawn, spawnSync } from "node:child_process"
import { appendFileSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { PatchStrategy, PolicyV1Api, setHeaderOptions, Watch } from "@kubernetes/client-node"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { DO_NOT_REPAIR_ANNOTATION, REPAIR_TAINT_KEY, ZONE_LABEL } from "@nodemend/reason-codes/keys"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { capacityFirstViolation, eventMicros, firstInFlightExcess, whatIfMismatch } from "./checks.mjs"
import { faultNamed, writeFault } from "./faults.mjs"
import {
  agentPublished,
  condition,
  isReady,
  POOL_LABEL,
  REGION,
  sleep,
  startFleet,
  TOLERATIONS
} from "./fleet.mjs"
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
  // NODEMEND_SCENARIO_DIR: a second run next to another one (each stops what a previous run in its dir left)
  dir: process.env.NODEMEND_SCENARIO_DIR || join(REPO_ROOT, ".nodemend", "scenario")
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
/**
 * Calls `onRecord(node, record)` for every version of the journal records of `nodes` the API server holds from now
 * on (list, then watch from the list's resourceVersion, re-watching where it left off). Returns the stop function.
 */
const watchJournals = async (nodes, onRecord) => {
  const names = new Map(nodes.map((n) => [`nodemend-repair-${n}`, n]))
  const seen = (cm) => {
    const node = names.get(cm?.metadata?.name)
    if (node === undefined) return
    try {
      onRecord(node, JSON.parse(cm.data?.record ?? "{}"))
    } catch {}
  }
  const path = `/api/v1/namespaces/${namespace}/configmaps`
  let rv = ""
  let stopped = false
  let ctl
  const run = async () => {
    if (stopped) return
    try {
      if (!rv) {
        const l = await core.listNamespacedConfigMap({ namespace })
        for (const cm of l.items) seen(cm)
        rv = l.metadata?.resourceVersion ?? ""
      }
      ctl = await new Watch(fleet.kc).watch(
        path,
        { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 25 },
        (type, obj) => {
          if (type === "ERROR") {
            if (obj?.code === 410) rv = ""
            return
          }
          rv = obj?.metadata?.resourceVersion ?? rv
          if (type === "ADDED" || type === "MODIFIED") seen(obj)
        },
        (err) => {
          if (stopped) return
          if (err?.statusCode === 410) rv = ""
          setTimeout(() => void run(), !err || err.name === "TimeoutError" ? 0 : 500)
        }
      )
    } catch {
      setTimeout(() => void run(), 500)
    }
  }
  await run()
  return () => {
    stopped = true
    ctl?.abort()
  }
}
const tainted = (node) => (node?.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY)
/**
 * Writes fault `name` into `node`'s host once its agent shows the fault's condition (it then reads the source:
 * see startFleet; a replacement's agent starts seconds after its node is Ready). Returns when it was written.
 */
const inject = async (node, name) => {
  const host = fleet.state.hosts[node]
  if (!host) throw new Error(`${node} has no agent (no simulated host) to inject into`)
  const fault = faultNamed(name)
  await waitFor(
    `${node}'s agent writing ${fault.conditionType}`,
    async () => agentPublished(await readNode(node), fault.conditionType),
    { timeoutMs: 60_000, intervalMs: 250 }
  )
  writeFault(host, fault)
  return Date.now()
}
/** Waits for a Ready node in `pool` that is not one of `known`; returns it. */
const replacementIn = (pool, known, what, timeoutMs = 300_000) =>
  waitFor(what, async () => (await poolNodes(pool)).find((n) => isReady(n) && !known.has(n.metadata.name)), {
    timeoutMs,
    intervalMs: 500
  })
const gone = (node, what, timeoutMs = 240_000) =>
  waitFor(what, async () => (await readNode(node)) === undefined, { timeoutMs, intervalMs: 500 })
/** The end of `node`'s agent log, for an error: CI shows the output, not the logs folder. */
const agentLogTail = (node, lines = 15) => {
  try {
    const text = readFileSync(join(fleet.dir, "logs", `agent-${node}.log`), "utf8")
      .trimEnd()
      .split("\n")
    return `\n  the end of ${node}'s agent log:\n${text
      .slice(-lines)
      .map((l) => `  | ${l.slice(0, 400)}`)
      .join("\n")}`
  } catch (e) {
    return `\n  (no agent log for ${node}: ${e?.message ?? e})`
  }
}
const failedCondition = (node, type, reason, what) =>
  waitFor(
    what,
    async (seen) => {
      const c = condition(await readNode(node), type)
      seen(c)
      return c?.status === "False" && c.reason === reason ? c : undefined
    },
    { timeoutMs: 60_000, intervalMs: 100 }
  ).catch((e) => {
    throw new Error(`${e.message}${agentLogTail(node)}`)
  })

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
  await waitFor(
    `${app} pods Running`,
    async () => {
      const running = (await core.listNamespacedPod({ namespace: workNs, labelSelector: `app=${app}` })).items
      return running.filter((p) => p.status?.phase === "Running").length === 2
    },
    { timeoutMs: 120_000, intervalMs: 250 }
  )
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
  const at = await inject(victim, "xid79")
  mark(S, "kernel log: NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.")
  await failedCondition(
    victim,
    "AcceleratedHardwareReady",
    "NvidiaXID79Error",
    "AcceleratedHardwareReady=False"
  )
  mark(S, `AcceleratedHardwareReady=False NvidiaXID79Error, ${since(at)} after the line`)
  await waitFor("RepairStarted after the toleration", () => hasEvent(victim, "RepairStarted"), {
    timeoutMs: 60_000,
    intervalMs: 250
  })
  mark(
    S,
    `toleration (${TOLERATIONS.AcceleratedHardwareReady} s) over: RepairStarted, ${since(at)} after the fault`
  )
  await waitFor(
    "the repair taint",
    async () => tainted(await readNode(victim)) || (await readNode(victim)) === undefined,
    { timeoutMs: 120_000, intervalMs: 250 }
  )
  mark(S, `tainted ${REPAIR_TAINT_KEY}:NoSchedule`)
  await waitFor("the first eviction", async () => (await podsLeft("trainer")) <= 1, {
    timeoutMs: 60_000,
    intervalMs: 250
  })
  mark(S, "drain: trainer evicted; the PDB (minAvailable 1) holds the other")
  await waitFor("the drain to finish", async () => (await podsLeft("trainer")) === 0, {
    timeoutMs: 90_000,
    intervalMs: 250
  })
  const forced = await hasEvent(victim, "DrainForced").catch(() => undefined)
  mark(S, `drain done${forced ? " (the last pod forced at the 20 s deadline: DrainForced)" : ""}`)
  await gone(victim, "the instance terminated and its Node removed")
  mark(S, `TerminateInstances: ${victim} gone, ${since(at)} after the fault`)
  const fresh = await replacementIn(GPU, known, "the replacement Ready")
  mark(S, `replacement ${fresh.metadata.name} Ready (${fresh.spec.providerID}), fault -> Ready ${since(at)}`)
  await storyDcgm(nodes[1].metadata.name, new Set([...known, fresh.metadata.name]))
}

/** `nodemend inject NODE FAULT` as a user runs it, against this run's fleet.json; its exit status and output. */
const injectCli = (node, name) =>
  new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--conditions=source", join(REPO_ROOT, "packages/demo/src/cli.mjs"), "inject", node, name],
      { env: { ...process.env, NODEMEND_DEMO_DIR: fleet.dir }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (out += d))
    child.on("exit", (code) => resolve({ code, out: out.trim() }))
  })

const storyDcgm = async (victim, known) => {
  const S = "1b dcgm   "
  // The agent registers its DCGM policy callback when it connects; until then the double drops a violation, as
  // DCGM does, and inject says so: retried, each attempt a separate violation the agent never saw.
  let attempt
  const at = Date.now()
  await waitFor(
    `nodemend inject ${victim} dcgm-dbe`,
    async () => {
      attempt = await injectCli(victim, "dcgm-dbe")
      return attempt.code === 0
    },
    { timeoutMs: 30_000, intervalMs: 1000 }
  ).catch((e) => {
    throw new Error(`${e.message}: ${attempt?.out}`)
  })
  mark(S, `nodemend inject: ${attempt.out}`)
  const c = await failedCondition(
    victim,
    "AcceleratedHardwareReady",
    "NvidiaDoubleBitError",
    "AcceleratedHardwareReady=False NvidiaDoubleBitError"
  )
  mark(
    S,
    `AcceleratedHardwareReady=False NvidiaDoubleBitError "${c.message}", ${since(at)} after the violation`
  )
  await gone(victim, "the node with the DBE terminated")
  const fresh = await replacementIn(GPU, known, "its replacement Ready")
  mark(S, `${victim} replaced by ${fresh.metadata.name}, ${since(at)} after the violation`)
}

/** The repairs' Events about `nodes` from one list call (one consistent read), with their time in microseconds. */
const repairEvents = async (nodes) => {
  const wanted = new Set(nodes)
  return (await core.listNamespacedEvent({ namespace: "default" })).items
    .filter((e) => wanted.has(e.involvedObject?.name) && /^(Repair|Replacement)/.test(e.reason ?? ""))
    .map((e) => ({ node: e.involvedObject.name, reason: e.reason, at: eventMicros(e), message: e.message }))
}
const isoOfMicros = (us) =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, -1)}${String(us % 1000).padStart(3, "0")}Z`

/** waitFor, except that the probe can fail the step at once by returning `{ fail: "why" }`. */
const waitOrFail = async (what, probe, timeoutMs, everyMs) => {
  const r = await waitFor(what, probe, { timeoutMs, intervalMs: everyMs })
  if (r.fail) throw new Error(r.fail)
  return r
}

const storyBreaker = async () => {
  const S = "2 breaker "
  const nodes = (await poolNodes(GENERAL)).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
  const known = new Set(nodes.map((n) => n.metadata.name))
  const settings = fleet.pools.find((p) => p.name === GENERAL).settings
  const inZone = (z) =>
    nodes.filter((n) => n.metadata.labels[ZONE_LABEL] === `${REGION}${z}`).map((n) => n.metadata.name)
  const [g1, g2] = inZone("a")
  const [g3, g4] = inZone("b")
  const four = [g1, g2, g3, g4]
  const at = Date.now()
  for (const n of [g1, g2]) await inject(n, "pids-exhausted")
  for (const n of [g3, g4]) await inject(n, "ipamd-no-token")
  mark(
    S,
    `4 of 10 fail at once: kubelet fork failures on ${g1}, ${g2}; ipamd without its token on ${g3}, ${g4} (breaker ${settings.maxUnhealthyPercent}%: allowed 4; maxInFlight "${settings.maxInFlight}")`
  )
  for (const n of [g1, g2])
    await failedCondition(n, "KernelReady", "ForkFailedOutOfPIDs", `${n} KernelReady=False`)
  for (const n of [g3, g4])
    await failedCondition(n, "NetworkingReady", "IPAMDNotReady", `${n} NetworkingReady=False`)
  mark(S, `KernelReady=False on ${g1}, ${g2}; NetworkingReady=False on ${g3}, ${g4}, ${since(at)}`)

  // After the toleration: 2 start, the other 2 wait for a slot (RepairQueued), none is held by the breaker. Every
  // check of order reads the four nodes' Events in one list call and replays them by their eventTime.
  const maxInFlight = Number(settings.maxInFlight)
  if (!Number.isInteger(maxInFlight)) throw new Error(`maxInFlight "${settings.maxInFlight}" is not a count`)
  const tooMany = (evs) => {
    const excess = firstInFlightExcess(evs, maxInFlight)
    if (excess === undefined) return undefined
    const others = excess.inFlight.filter((n) => n !== excess.node)
    return `${excess.node} started at ${isoOfMicros(excess.at)} while ${others.join(", ")} were still in flight (maxInFlight "${settings.maxInFlight}")`
  }
  const has = (evs, node, reason) => evs.some((e) => e.node === node && e.reason === reason)
  const summary = (evs) => evs.map((e) => `${e.node} ${e.reason} ${isoOfMicros(e.at)}`)
  // The controller's journal records of the four, watched until the step ends: drainStartedAt is in each record
  // from the drain on, and the record is deleted when the repair succeeds; a watch from the list's resourceVersion
  // sees every write (polling missed a record that lived less than one round under load).
  const records = new Map()
  const stopJournals = await watchJournals(four, (n, r) => {
    if (r?.drainStartedAt !== undefined && !records.has(n)) records.set(n, r)
  })
  try {
    const split = await waitOrFail(
      "2 RepairStarted and 2 RepairQueued",
      async (seen) => {
        const evs = await repairEvents(four)
        seen(summary(evs))
        const fail = tooMany(evs)
        if (fail) return { fail }
        const started = four.filter((n) => has(evs, n, "RepairStarted"))
        const queued = four.filter((n) => !started.includes(n) && has(evs, n, "RepairQueued"))
        return started.length === 2 && queued.length === 2 ? { started, queued } : undefined
      },
      90_000,
      250
    )
    const { started, queued } = split
    for (const n of four)
      if (await hasEvent(n, "RepairBlocked"))
        throw new Error(`${n}: RepairBlocked, but 4 of 10 is within 40%`)
    for (const n of queued)
      if (tainted(await readNode(n)) || (await journal(n)))
        throw new Error(`${n} was touched while queued for a repair slot`)
    const why = (await hasEvent(queued[0], "RepairQueued")).message
    if (!/\b2 repairs in flight in pool \S+, allowed 2 by maxInFlight "2"/.test(why))
      throw new Error(`RepairQueued does not say why: "${why}"`)
    mark(
      S,
      `toleration (10 s) over: RepairStarted on ${started.join(", ")}; ${queued.join(", ")} wait: "${why}"`
    )
    const view = render(await takeSnapshot(fleet), { width: 400 }).find((l) => l.includes(queued[0])) ?? ""
    if (!view.includes("QUEUED: 2 in flight, allowed 2"))
      throw new Error(`the view does not say ${queued[0]} is queued: ${view}`)
    mark(S, `view: ${view.trim().replace(/\s+/g, " ")}`)

    // The queued two start only once one of the first two has succeeded: never more than 2 in flight.
    let firstDone
    await waitOrFail(
      `RepairStarted on ${queued.join(", ")} after a repair ended`,
      async (seen) => {
        const evs = await repairEvents(four)
        seen(summary(evs))
        const fail = tooMany(evs)
        if (fail) return { fail }
        const failed = evs.find((e) => e.reason === "RepairFailed")
        if (failed) return { fail: `the repair of ${failed.node} failed: ${failed.message}` }
        const first = evs
          .filter((e) => started.includes(e.node) && e.reason === "RepairSucceeded")
          .sort((a, b) => a.at - b.at)[0]
        // The record's last version may reach the watch after the Event: judged once it has (and again at the end).
        if (first && !firstDone && records.has(first.node)) {
          firstDone = first
          const why = capacityFirstViolation({
            node: first.node,
            record: records.get(first.node),
            replacementReadyAt: evs.find((e) => e.node === first.node && e.reason === "ReplacementReady")?.at
          })
          if (why) return { fail: `not capacity first: ${why}` }
          mark(
            S,
            `RepairSucceeded on ${first.node} (replacement Ready before its drain began at ${records.get(first.node).drainStartedAt}), ${since(at)}`
          )
        }
        const late = queued.filter((n) => has(evs, n, "RepairStarted"))
        return late.length === 2 ? late : undefined
      },
      300_000,
      250
    )
    mark(S, `a slot freed: RepairStarted on ${queued.join(", ")}, ${since(at)}`)
    for (const n of four) await gone(n, `${n} terminated`, 300_000)
    // The whole step from one read: never more than 2 in flight, each of the four capacity first.
    const evs = await repairEvents(four)
    const fail = tooMany(evs)
    if (fail) throw new Error(fail)
    for (const n of four) {
      const why = capacityFirstViolation({
        node: n,
        record: records.get(n),
        replacementReadyAt: evs.find((e) => e.node === n && e.reason === "ReplacementReady")?.at
      })
      if (why) throw new Error(`not capacity first: ${why}`)
    }
    mark(
      S,
      `${four.join(", ")} drained, terminated and removed, each after its replacement was Ready, never more than ${maxInFlight} at once, ${since(at)}`
    )
  } finally {
    stopJournals()
  }
  await waitFor(
    "10 Ready general nodes again, 4 of them replacements",
    async () => {
      const now = await poolNodes(GENERAL)
      return now.filter(isReady).length >= 10 && now.filter((n) => !known.has(n.metadata.name)).length >= 4
    },
    { timeoutMs: 150_000, intervalMs: 500 }
  )
  mark(S, `all 4 replaced, pool ${GENERAL} back to 10 Ready, ${since(at)}`)
}

/** The node story 3 repairs only after its zonal shift (what-if: a recording holds no zonal shifts). */
let shiftedNode
const storyZonalShift = async () => {
  const S = "3 shift   "
  const zone = `${REGION}c`
  const victim = (await poolNodes(GENERAL)).find(
    (n) => n.metadata.labels[ZONE_LABEL] === zone && isReady(n) && fleet.state.hosts[n.metadata.name]
  ).metadata.name
  shiftedNode = victim
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
    { timeoutMs: 60_000, intervalMs: 500 }
  )
  mark(S, "the controller sees the shift (zonal_shift_stand_down{cause=shift} 1)")
  const at = await inject(victim, "pids-exhausted")
  mark(S, `kubelet journal fork failure on ${victim} in ${zone}`)
  await failedCondition(victim, "KernelReady", "ForkFailedOutOfPIDs", `${victim} KernelReady=False`)
  const sd = await waitFor("RepairStandDown", () => hasEvent(victim, "RepairStandDown"), {
    timeoutMs: 60_000,
    intervalMs: 250
  })
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
  await waitFor("RepairStarted after the shift", () => hasEvent(victim, "RepairStarted"), {
    timeoutMs: 60_000,
    intervalMs: 250
  })
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
  const at = await inject(victim, "ipamd-no-token")
  await failedCondition(victim, "NetworkingReady", "IPAMDNotReady", `${victim} NetworkingReady=False`)
  mark(S, `NetworkingReady=False IPAMDNotReady, ${since(at)} after the ipamd lines`)
  const vetoed = await waitFor("RepairVetoed", () => hasEvent(victim, "RepairVetoed"), {
    timeoutMs: 60_000,
    intervalMs: 250
  })
  mark(S, `RepairVetoed: "${vetoed.message}"`)
  await sleep(15_000)
  const node = await readNode(victim)
  if (!node || tainted(node) || (await hasEvent(victim, "RepairStarted")) || (await journal(victim)))
    throw new Error(`${victim} was touched despite the veto`)
  const view = render(await takeSnapshot(fleet), { width: 400 }).find((l) => l.includes(victim)) ?? ""
  if (!view.includes("VETOED")) throw new Error(`the view does not say ${victim} is vetoed: ${view}`)
  mark(S, `${since(at)} after the fault: not tainted, no repair; view: ${view.trim().replace(/\s+/g, " ")}`)
}

/** Story 6's retirement, for the what-if recording: a `scheduledEvent` line of the history format. */
let retirement
const storyRetirement = async () => {
  const S = "6 retire  "
  const nodes = await poolNodes(GPU)
  const known = new Set(nodes.map((n) => n.metadata.name))
  const victim = nodes.find(
    (n) => n.metadata.labels[ZONE_LABEL] === `${REGION}b` && isReady(n) && fleet.state.hosts[n.metadata.name]
  ).metadata.name
  const instanceId = (await readNode(victim)).spec.providerID.split("/").at(-1)
  const res = await fetch(`${fleet.cloudUrl}/admin/instances/${encodeURIComponent(instanceId)}/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: "instance-retirement", notBeforeInMinutes: 10 })
  })
  if (!res.ok) throw new Error(`schedule a retirement: HTTP ${res.status} ${await res.text()}`)
  const e = await res.json()
  const at = Date.now()
  const notBefore = Date.parse(e.notBefore)
  retirement = { node: victim, at, event: e }
  mark(
    S,
    `EC2 schedules ${e.code} ${e.instanceEventId} for ${victim} (${instanceId}), NotBefore ${e.notBefore}`
  )
  const planned = await waitFor("RepairPlanned", () => hasEvent(victim, "RepairPlanned"), {
    timeoutMs: 60_000,
    intervalMs: 250
  })
  mark(S, `RepairPlanned ${since(at)} after: "${planned.message}"`)
  // Visible without trusting the node: the controller's journal, as `kubectl nodemend status` prints it.
  const args = [
    "status",
    "-l",
    fleet.selector,
    "--controller-namespace",
    namespace,
    "--kubeconfig",
    fleet.kubeconfig
  ]
  const status = await waitFor(
    "the plan in kubectl nodemend status",
    async () => {
      const r = spawnSync(PLUGIN, args, { encoding: "utf8" })
      return (r.stdout ?? "").split("\n").find((l) => l.startsWith(victim) && l.includes(e.instanceEventId))
    },
    { timeoutMs: 30_000, intervalMs: 1000 }
  )
  mark(S, `kubectl nodemend status: ${status.replace(/\s+/g, " ")}`)
  if (await hasEvent(victim, "RepairStarted"))
    throw new Error(`${victim}: repair started before its due time`)
  const started = await waitFor("RepairStarted at the due time", () => hasEvent(victim, "RepairStarted"), {
    timeoutMs: 90_000,
    intervalMs: 250
  })
  if (!started.message?.includes("EC2ScheduledEvent=True (EC2InstanceRetirementScheduled)"))
    throw new Error(`${victim}: RepairStarted is not the planned repair: ${started.message}`)
  mark(S, `RepairStarted ${since(at)} after the schedule (due NotBefore - 585 s lead)`)
  await gone(victim, "the retiring instance terminated")
  const fresh = await replacementIn(GPU, known, "its replacement Ready")
  if (Date.now() >= notBefore) throw new Error(`${victim} was replaced after its NotBefore ${e.notBefore}`)
  mark(
    S,
    `${victim} replaced by ${fresh.metadata.name}, ${((notBefore - Date.now()) / 60_000).toFixed(1)} min before NotBefore`
  )
}

/** The retirement as the history format carries it (the recorder watches Nodes; scheduled events are the cloud's). */
const retirementLine = () => {
  const e = retirement.event
  return JSON.stringify({
    v: 1,
    kind: "scheduledEvent",
    at: new Date(retirement.at).toISOString(),
    node: retirement.node,
    id: e.instanceEventId,
    code: e.code,
    notBefore: e.notBefore,
    ...(e.notAfter !== undefined ? { notAfter: e.notAfter } : {})
  })
}

// 5. What-if, as an operator runs it: the plugin's record for the whole run, its whatif over the recording.
const PLUGIN = join(REPO_ROOT, "node_modules", ".bin", "kubectl-nodemend")
const historyFile = join(fleet.dir, "history.jsonl")
const startRecording = async () => {
  const args = ["record", "-o", historyFile, "-l", fleet.selector, "--pool-label", POOL_LABEL]
  const proc = spawn(PLUGIN, [...args, "--kubeconfig", fleet.kubeconfig], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let err = ""
  proc.stderr.on("data", (d) => (err += d))
  const exited = new Promise((resolve) => proc.once("exit", resolve))
  const listed = () => readFileSync(historyFile, "utf8").split("\n").filter(Boolean).length
  await waitFor(
    "kubectl nodemend record to list the fleet",
    async () => {
      if (proc.exitCode !== null) throw new Error(`kubectl nodemend record exited: ${err}`)
      try {
        return listed() >= Object.keys(fleet.state.hosts).length
      } catch {
        return false
      }
    },
    { timeoutMs: 60_000, intervalMs: 250 }
  )
  mark("5 what-if ", `kubectl nodemend ${args.join(" ")}: ${listed()} lines so far`)
  return async () => {
    proc.kill("SIGINT")
    await exited
    if (proc.exitCode !== 0) throw new Error(`kubectl nodemend record exited ${proc.exitCode}: ${err}`)
  }
}
const storyWhatIf = async () => {
  const S = "5 what-if "
  const history = readFileSync(historyFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
  const recorded = new Set(history.map((l) => l.node).filter(Boolean))
  // The replay's replacements join as the fake cloud's machines boot here (the replay's own cloud has no clock).
  const args = [
    "whatif",
    "--config",
    join(fleet.dir, "controller.yaml"),
    "--repair-duration",
    `${fleet.bootDelayMs / 1000}s`,
    "-o",
    "json",
    historyFile
  ]
  const r = spawnSync(PLUGIN, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) throw new Error(`kubectl nodemend ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  const replayed = JSON.parse(r.stdout)
  if (replayed.skipped.length) throw new Error(`whatif skipped lines: ${JSON.stringify(replayed.skipped)}`)
  // One list: the controller's RepairStarted and RepairQueued Events of the recorded nodes.
  const evs = (await core.listNamespacedEvent({ namespace: "default" })).items.filter((e) =>
    recorded.has(e.involvedObject?.name)
  )
  const of = (reason) => evs.filter((e) => e.reason === reason)
  const live = of("RepairStarted").map((e) => ({ node: e.involvedObject.name, at: eventMicros(e) }))
  const queuedLive = of("RepairQueued").map((e) => e.involvedObject.name)
  const mismatch = whatIfMismatch({ live, queuedLive, replayed, shifted: shiftedNode, toleranceMs: 15_000 })
  if (mismatch) throw new Error(`whatif over the recording is not what the controller did: ${mismatch}`)
  mark(
    S,
    `${history.length} lines recorded; whatif under the demo's config: the ${live.length} repairs the controller made (${replayed.holds.length} holds: ${[...new Set(replayed.holds.map((h) => h.cause))].join(", ")}), starts within 15 s (the nodes due together for the in-flight slots as a group); ${shiftedNode} sooner (no zonal shift in a recording)`
  )
}

// As in `npm start`: replacements get their agents too.
const agentSync = setInterval(() => fleet.syncAgents().catch(() => undefined), 3000)
let failed
let stopRecording = async () => undefined
try {
  await core.createNamespace({ body: { metadata: { name: workNs, labels: { "nodemend.io/demo": "true" } } } })
  stopRecording = await startRecording()
  const results = await Promise.allSettled([storyGpu(), storyBreaker()])
  failed = results.find((r) => r.status === "rejected")?.reason
  if (!failed) {
    const more = await Promise.allSettled([storyZonalShift(), storyVeto(), storyRetirement()])
    failed = more.find((r) => r.status === "rejected")?.reason
  }
  const stop = stopRecording
  stopRecording = async () => undefined
  await stop()
  if (retirement !== undefined) appendFileSync(historyFile, `${retirementLine()}\n`)
  if (!failed) await storyWhatIf()
} catch (e) {
  failed = e
}
await stopRecording().catch(() => undefined)
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
