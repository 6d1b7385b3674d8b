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
  createPdb,
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

/** Stops one control-plane process of this file's cluster and starts it again with the same command line. */
const restart = async (name: "kube-apiserver" | "etcd", downMs: number) => {
  const pidFile = join(STATE, "pids", `${name}.pid`)
  const pid = Number(readFileSync(pidFile, "utf8"))
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\u0000").filter(Boolean)
  process.kill(pid, "SIGKILL")
  // Gone, or a zombie (nothing here reaps the detached control plane's processes).
  const stopped = () => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === true
    } catch {
      return true
    }
  }
  await waitFor(`${name} stopped`, () => (stopped() ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 50
  })
  await sleep(downMs)
  const fd = openSync(join(STATE, "logs", `${name}.log`), "a")
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: STATE,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, KUBECONFIG: "" }
  })
  closeSync(fd)
  child.unref()
  writeFileSync(pidFile, String(child.pid))
}

beforeAll(async () => {
  cluster("up")
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
    const s = scenario(`rs-${component === "etcd" ? "e" : "a"}-${at[0]}`)
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata?.name ?? "")
    const target = nodes[0]!
    const app = `${s.tag}-app`
    const pods = await Promise.all(
      [0, 1].map(() => createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } }))
    )
    for (const p of pods)
      await waitForPodPhase(core, ns, p.metadata?.name ?? "", "Running", { timeoutMs: 60_000 })
    await createPdb(policy, ns, app, 2)
    const config = testConfig(ns, s, {
      drain: {
        deadlineSeconds: 8,
        onDeadline: "force",
        evictionBackoffInitialMs: 200,
        evictionBackoffMaxMs: 1000
      },
      kwok: { replacementDelaySeconds: 3, zonalShiftConfigMap: `shifts-${s.tag}` }
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
      at,
      phaseAtRestart,
      downMs,
      completedMs,
      controllerRestarts,
      replacements: replacements.items.length,
      othersTainted: others.filter(isTainted).length,
      repairStartedEvents: started.length
    }
  }

  it("kube-apiserver restarted mid-drain and mid-termination; etcd restarted mid-drain: every repair completes", async () => {
    const results: Array<Awaited<ReturnType<typeof trial>>> = []
    for (let i = 0; i < pick(1, 5); i++) {
      results.push(await trial("kube-apiserver", "drain"))
      results.push(await trial("kube-apiserver", "termination"))
      results.push(await trial("etcd", "drain"))
    }
    recordFigures("api-restart", { trials: results })
    for (const r of results) {
      expect(r.replacements).toBe(1)
      expect(r.othersTainted).toBe(0)
      expect(r.repairStartedEvents).toBe(1)
    }
  })
})
