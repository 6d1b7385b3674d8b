/**
 * Mass false positive, agent-driven: every node of a pool runs the real agent binary (its own host root), and
 * the same fork failure is written to every node's kubelet journal at once, as a bad AMI or a noisy log rule
 * would. The agents turn KernelReady False on 100% of the pool through their real log pipeline. The real
 * controller must touch at most ceil(20% x pool) nodes (here: none, since more than that are unhealthy), and say
 * why the rest wait: a RepairBlocked Event per node and `breaker_open{pool}` 1 on /metrics.
 */
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type FakeHost,
  JOURNAL_REMOTE,
  makeFakeHost,
  type RunningAgent,
  startAgent
} from "../../../agent/test/integration/agent-process.ts"
import {
  type ControllerProcess,
  killControllers,
  startControllerProcess
} from "../integration/controllerProcess.ts"
import {
  createPool,
  isReady,
  nodeEvents,
  scenario,
  sleep,
  testConfig,
  waitForEvent
} from "../integration/helpers.ts"
import { pick, recordFigures, watchTaints } from "./fleet.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []
const agents: RunningAgent[] = []
const hosts: FakeHost[] = []

const AGENT_CONFIG = `
checks:
  open-files: { intervalSeconds: 5 }
`
const FORK_FAILURE =
  'E1130 05:00:00.000000 1234 kuberuntime_manager.go:1] "Failed" err="fork/exec /usr/bin/runc: resource temporarily unavailable"'

beforeAll(async () => {
  ns = await createTestNamespace(core, "rel-mass")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
  for (const a of agents.splice(0)) await a.stop()
  for (const h of hosts.splice(0)) h.cleanup()
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe.skipIf(JOURNAL_REMOTE === undefined)("mass false positive through real agent log lines", () => {
  it("100% of a pool unhealthy at once: at most ceil(20%) touched; RepairBlocked and breaker_open say why", async () => {
    const size = pick(5, 10)
    const allowed = Math.ceil(0.2 * size)
    const s = scenario("mass")
    const nodes = (await createPool(core, s, size)).map((n) => n.metadata?.name ?? "")
    await waitFor(
      "the pool Ready",
      async () =>
        (await Promise.all(nodes.map((n) => core.readNode({ name: n }).then(isReady)))).every(Boolean)
          ? true
          : undefined,
      { timeoutMs: 200_000, intervalMs: 500 }
    )
    for (const [i, name] of nodes.entries()) {
      const host = makeFakeHost(`6a1f0c2e-0000-4000-8000-${String(i).padStart(12, "0")}`)
      hosts.push(host)
      agents.push(startAgent({ nodeName: name, hostRoot: host.root, config: host.writeConfig(AGENT_CONFIG) }))
    }
    const kernelReady = async (name: string) =>
      (await core.readNode({ name })).status?.conditions?.find((c) => c.type === "KernelReady")?.status
    await waitFor(
      "every agent reporting KernelReady True",
      async () => ((await Promise.all(nodes.map(kernelReady))).every((x) => x === "True") ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 500 }
    )
    const ctl = await startControllerProcess(kubeconfig, testConfig(ns, s))
    running.push(ctl)
    const taints = watchTaints(core, [s.pool])
    const t0 = Date.now()
    for (const h of hosts) h.writeJournal("kubelet", FORK_FAILURE)
    await waitFor(
      "KernelReady False on the whole pool",
      async () =>
        (await Promise.all(nodes.map(kernelReady))).every((x) => x === "False") ? true : undefined,
      { timeoutMs: 120_000, intervalMs: 250 }
    )
    const allFalseMs = Date.now() - t0
    // Past the 3 s toleration and two breaker requeues (2 s).
    for (const n of nodes) await waitForEvent(core, n, "RepairBlocked", 60_000)
    await sleep(6000)
    const tainted = await taints.stop()
    const started = (await Promise.all(nodes.map((n) => nodeEvents(core, n, "RepairStarted")))).flat()
    const blocked = (await Promise.all(nodes.map((n) => nodeEvents(core, n, "RepairBlocked")))).flat()
    const metrics = (await ctl.get("/metrics")).body
    const breakerOpen = new RegExp(
      `nodemend_controller_breaker_open\\{[^}]*pool="${s.pool}"[^}]*\\} 1\\b`
    ).test(metrics)
    recordFigures("mass-false-positive", {
      poolSize: size,
      allowed,
      unhealthy: size,
      allFalseMs,
      touched: tainted.size,
      repairStarted: started.length,
      repairBlockedEvents: blocked.length,
      breakerOpen,
      blockedNote: blocked[0]?.message
    })
    expect(tainted.size).toBeLessThanOrEqual(allowed)
    expect(started.length).toBeLessThanOrEqual(allowed)
    expect(blocked.length).toBeGreaterThanOrEqual(size - allowed)
    // Each node's Event is written once (deduped), when that node fell due. An unhealthy node counts in its pool
    // once its placement is proven (ADR 0015), so an early Event may count part of the pool, each time with
    // more unhealthy nodes than the breaker allows.
    for (const e of blocked) {
      const m = /\((\d+) of (\d+), allowed (\d+)\)/.exec(e.message ?? "")
      expect(m, e.message).not.toBeNull()
      const [unhealthy, of, allowedThen] = [Number(m?.[1]), Number(m?.[2]), Number(m?.[3])]
      expect(of).toBeLessThanOrEqual(size)
      expect(allowedThen).toBe(Math.ceil(0.2 * of))
      expect(unhealthy).toBeGreaterThan(allowedThen)
    }
    // Once every placement is proven, the whole pool counts.
    const gauge = (name: string) =>
      new RegExp(`nodemend_controller_${name}\\{[^}]*pool="${s.pool}"[^}]*\\} (\\d+)`).exec(metrics)?.[1]
    expect([gauge("pool_unhealthy_nodes"), gauge("pool_nodes"), gauge("pool_unhealthy_allowed")]).toEqual([
      String(size),
      String(size),
      String(allowed)
    ])
    expect(breakerOpen).toBe(true)
  })
})
