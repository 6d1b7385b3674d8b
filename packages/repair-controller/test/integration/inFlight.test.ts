/**
 * The in-flight budget per pool (issue #16) on the real cluster: nodes that fall due at the same instant are
 * decided by parallel workers, yet no more than `maxInFlight` repairs start; the rest wait (RepairQueued) and
 * start as the first ones end. Found by the fleet scenario: the slot used to be counted only at the journal
 * write, after the owner lookup, so every node due in the same instant saw 0 in flight.
 */
import { clients, createTestNamespace, deleteNamespace, deleteRunNodes } from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import { createPool, nodeEvents, scenario, setKernelReady, testConfig, waitForEvent } from "./helpers.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "inflight")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

const at = async (node: string, reason: string) => {
  const e = (await nodeEvents(core, node, reason))[0]
  return Date.parse(String(e?.eventTime ?? e?.firstTimestamp ?? ""))
}

describe("repairs in flight per pool", () => {
  it("4 of 10 due at the same instant, maxInFlight 2: 2 start, 2 wait (RepairQueued) until one ends", async () => {
    const s = scenario("inflight")
    const nodes = (await createPool(core, s, 10)).map((n) => n.metadata?.name ?? "")
    const config = testConfig(ns, s, {
      maxUnhealthyPercent: 40,
      maxInFlight: "2",
      kwok: { replacementDelaySeconds: 3, zonalShiftConfigMap: `shifts-${s.tag}` }
    })
    running.push(await startControllerProcess(kubeconfig, config))
    const bad = nodes.slice(0, 4)
    await Promise.all(bad.map((n) => setKernelReady(core, n, "False")))
    await Promise.all(bad.map((n) => waitForEvent(core, n, "RepairSucceeded", 120_000)))

    const started = await Promise.all(bad.map((n) => at(n, "RepairStarted")))
    const succeeded = await Promise.all(bad.map((n) => at(n, "RepairSucceeded")))
    const queued = await Promise.all(
      bad.map(async (n) => (await nodeEvents(core, n, "RepairQueued")).length > 0)
    )
    expect(queued.filter(Boolean)).toHaveLength(2)
    const firstDone = Math.min(...succeeded)
    // Exactly two started before any repair ended; the queued two only after one did.
    expect(started.filter((t) => t < firstDone)).toHaveLength(2)
    bad.forEach((_, i) => {
      if (queued[i]) expect(started[i]).toBeGreaterThanOrEqual(firstDone)
    })
    const msg = (await nodeEvents(core, bad[queued.indexOf(true)] ?? "", "RepairQueued"))[0]?.message
    expect(msg).toMatch(/2 repairs in flight .* allowed 2 by maxInFlight "2"/)
  }, 180_000)
})
