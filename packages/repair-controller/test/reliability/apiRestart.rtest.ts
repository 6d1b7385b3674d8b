/**
 * The API server and etcd restarted in the middle of repairs, on a cluster of this file's own (state in
 * .nodemend/reliability, `tools/cluster/cluster.mjs up`/`down`; the shared development cluster is never
 * restarted). A repair is held in its drain by a PDB that allows no eviction (deadline 8 s, then force); the
 * kube-apiserver (or etcd) is killed (SIGKILL: a crash) in the middle of it and started again after a few seconds with
 * the same command line. Then the repair must complete (Node gone, one replacement Ready, RepairSucceeded), the
 * pool's other nodes untouched and untainted.
 */
import { execFileSync, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  clients,
  createTestNamespace,
  createTestPod,
  waitFor,
  waitForPodPhase
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type ControllerProcess,
  killControllers,
  startControllerProcess
} from "../integration/controllerProcess.ts"
import {
  createPool,
  isTainted,
  nodeEvents,
  repairPhase,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent,
  waitForNodeGone,
  waitForReplacementReady
} from "../integration/helpers.ts"
import { resyncDroppedPods } from "../../../../tools/cluster/kwokResync.mjs"
import { pick, recordFigures } from "./figures.ts"

const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo)

const REPO = fileURLToPath(new URL("../../../..", import.meta.url))
const STATE = join(REPO, ".nodemend/reliability")
const NODE = join(REPO, "node_modules/.bin/node")
const cluster = (cmd: "up" | "down") =>
  execFileSync(NODE, [join(REPO, "tools/cluster/cluster.mjs"), cmd], {
    env: { ...process.env, NODEMEND_STATE_DIR: STATE },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000
  })

let c: ReturnType<typeof clients>
let ns = ""
const running: ControllerProcess[] = []

const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"] as const
type Component = (typeof COMPONENTS)[number]
/** Each component's command line, read once the cluster is up. */
const commandLines = new Map<Component, string[]>()
const pidOf = (name: Component) => Number(readFileSync(join(STATE, "pids", `${name}.pid`), "utf8"))
/** Gone, or a zombie (nothing here reaps the detached control plane's processes). */
const dead = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === true
  } catch {
    return true
  }
}
const launch = (name: Component) => {
  const argv = commandLines.get(name) ?? []
  const fd = openSync(join(STATE, "logs", `${name}.log`), "a")
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: STATE,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, KUBECONFIG: "" }
  })
  closeSync(fd)
  child.unref()
  writeFileSync(join(STATE, "pids", `${name}.pid`), String(child.pid))
}
/**
 * Starts again every component that exited, as systemd or the kubelet would on a real control plane: the
 * controller-manager and scheduler exit on purpose when they cannot renew their leases while the API server is
 * down. Returns the names restarted.
 */
const revive = (): Component[] => {
  const revived = COMPONENTS.filter((n) => dead(pidOf(n)))
  for (const n of revived) launch(n)
  return revived
}

/** Kills one control-plane process of this file's cluster (a crash) and starts it again with the same command line. */
const restart = async (name: "kube-apiserver" | "etcd", downMs: number) => {
  const pid = pidOf(name)
  process.kill(pid, "SIGKILL")
  await waitFor(`${name} stopped`, () => (dead(pid) ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 50
  })
  await sleep(downMs)
  launch(name)
}

/**
 * Waits for the trial's pods to run. kwok (v0.8.0) drops a Pod event that arrives before its Node's Lease is in
 * kwok's lease cache and never looks at that Pod again; after kube-apiserver restarts kwok's lease watch can lag its
 * pod watch by seconds (tools/cluster/kwokResync.mjs cites kwok's lines). As the cluster's supervisor (like
 * revive), the trial gives such Pods their second look, a kubelet's pod sync: resyncDroppedPods touches only Pods
 * kwok has provably dropped (it renewed their Node's Lease since). Returns the Pods it resynced (the figures say).
 */
const podsRunning = async (core: ReturnType<typeof clients>["core"], names: ReadonlyArray<string>) => {
  const resynced = new Set<string>()
  let waiting = true
  const resync = (async () => {
    while (waiting) {
      const r = await resyncDroppedPods({ stateDir: STATE, namespace: ns }).catch(() => [])
      for (const p of r) resynced.add(p)
      await sleep(2000)
    }
  })()
  try {
    await Promise.all(names.map((n) => waitForPodPhase(core, ns, n, "Running", { timeoutMs: 60_000 })))
  } finally {
    waiting = false
    await resync
  }
  return [...resynced]
}

beforeAll(async () => {
  cluster("up")
  for (const n of COMPONENTS)
    commandLines.set(
      n,
      readFileSync(`/proc/${pidOf(n)}/cmdline`, "utf8")
        .split("\u0000")
        .filter(Boolean)
    )
  c = clients(join(STATE, "kubeconfig"))
  ns = await createTestNamespace(c.core, "rel-restart")
}, 600_000)
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(() => {
  cluster("down")
}, 120_000)

describe("API server and etcd restarted mid-repair (a cluster of this file's own)", () => {
  const trial = async (component: "kube-apiserver" | "etcd", at: "drain" | "termination") => {
    const { core, policy } = c
    const revivedBefore = revive()
    const s = scenario(`rs-${component === "etcd" ? "e" : "a"}-${at[0]}`)
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata?.name ?? "")
    const target = nodes[0]!
    const app = `${s.tag}-app`
    const pods = await Promise.all(
      [0, 1].map(() => createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } }))
    )
    const kwokResynced = await podsRunning(
      core,
      pods.map((p) => p.metadata?.name ?? "")
    )
    // A revived controller-manager leads only once its old Lease expired: its disruption controller may take a while.
    await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: {
        metadata: { name: `pdb-${app}`.slice(0, 63) },
        spec: { minAvailable: 2, selector: { matchLabels: { app } } }
      }
    })
    await waitFor(
      "the PDB observed",
      async () => {
        const p = await policy.readNamespacedPodDisruptionBudget({
          name: `pdb-${app}`.slice(0, 63),
          namespace: ns
        })
        return p.status?.observedGeneration !== undefined && p.status.disruptionsAllowed === 0
          ? true
          : undefined
      },
      { timeoutMs: 120_000, intervalMs: 500 }
    )
    const config = testConfig(ns, s, {
      drain: {
        deadlineSeconds: 8,
        onDeadline: "force",
        evictionBackoffInitialMs: 200,
        evictionBackoffMaxMs: 1000
      },
      kwok: { replacementDelaySeconds: 3, zonalShiftConfigMap: `shifts-${s.tag}` },
      // Mid-termination means after the instance is gone and before the replacement is Ready: the remove-first
      // order has that window (capacity first replaces before the drain, and ends as soon as the node is gone).
      ...(at === "termination" ? { replacement: { timeoutSeconds: 90, capacityFirst: false } } : {})
    })
    // As the Deployment's restart policy does: a controller that exits (a leader that could not renew its
    // Lease while the API server was down exits on purpose) is started again.
    let controllerRestarts = 0
    let supervising = true
    const supervisor = (async () => {
      let proc = await startControllerProcess(join(STATE, "kubeconfig"), config)
      running.push(proc)
      while (supervising) {
        if (proc.proc.exitCode !== null || proc.proc.signalCode !== null) {
          controllerRestarts++
          proc = await startControllerProcess(join(STATE, "kubeconfig"), config)
          running.push(proc)
        }
        await sleep(500)
      }
    })()
    await setKernelReady(core, target, "False")
    if (at === "drain") await waitForEvent(core, target, "EvictionBlocked", 60_000)
    else
      await waitFor(
        "the instance terminated",
        async () => {
          const phase = await repairPhase(core, ns, target)
          return phase === "RemovingNode" || phase === "Replacing" ? phase : undefined
        },
        { timeoutMs: 60_000, intervalMs: 50 }
      )
    const phaseAtRestart = await repairPhase(core, ns, target)
    const downMs = Math.round(rand(2000, 6000))
    const t0 = Date.now()
    await restart(component, downMs)
    // The rest of the control plane restarted as its supervisor would, once the API server answers again.
    await waitFor("the API server back", () => core.readNamespace({ name: ns }).then(() => true), {
      timeoutMs: 60_000,
      intervalMs: 250
    })
    await sleep(6000)
    const revivedAfter = revive()
    await waitForNodeGone(core, target, 120_000)
    await waitForReplacementReady(core, target, 120_000)
    await waitForEvent(core, target, "RepairSucceeded", 60_000).finally(async () => {
      supervising = false
      await supervisor
    })
    const completedMs = Date.now() - t0
    const replacements = await core.listNode({ labelSelector: `nodemend.io/replacement-of=${target}` })
    const others = await Promise.all(nodes.slice(1).map((n) => core.readNode({ name: n })))
    const started = await nodeEvents(core, target, "RepairStarted")
    return {
      component,
      during: at,
      phaseAtRestart,
      downMs,
      completedMs,
      controllerRestarts,
      controlPlaneRevived: [...revivedBefore, ...revivedAfter],
      kwokResynced,
      replacements: replacements.items.length,
      othersTainted: others.filter(isTainted).length,
      repairStartedEvents: started.length
    }
  }

  it("kube-apiserver restarted mid-drain and mid-termination; etcd restarted mid-drain: every repair completes", async () => {
    const results: Array<Awaited<ReturnType<typeof trial>>> = []
    const kinds = [
      ["kube-apiserver", "drain"],
      ["kube-apiserver", "termination"],
      ["etcd", "drain"]
    ] as const
    // The trials run in this order, kinds in turn: 3 (CI) or 15 (long). NODEMEND_API_RESTART_FROM and
    // NODEMEND_API_RESTART_TRIALS run a slice of that sequence (numbered from 1) on a fresh cluster, to finish
    // a long run that stopped part way.
    const from = Number(process.env.NODEMEND_API_RESTART_FROM ?? "1")
    const total = pick(1, 5) * kinds.length
    const count = Number(process.env.NODEMEND_API_RESTART_TRIALS ?? String(total - from + 1))
    for (let n = from; n < from + count; n++) {
      const [component, at] = kinds[(n - 1) % kinds.length]!
      const r = { trial: n, ...(await trial(component, at)) }
      recordFigures("api-restart-trial", r)
      results.push(r)
    }
    recordFigures("api-restart", { trials: results })
    for (const r of results) {
      expect(r.replacements).toBe(1)
      expect(r.othersTainted).toBe(0)
      expect(r.repairStartedEvents).toBe(1)
    }
  })
})
