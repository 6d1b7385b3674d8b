/**
 * The in-flight budget per pool (issue #16) on the real cluster: nodes that fall due at the same instant are
 * decided by parallel workers, yet no more than `maxInFlight` repairs start; the rest wait (RepairQueued) and
 * start as the first ones end. Found by the fleet scenario: the slot used to be counted only at the journal
 * write, after the owner lookup, so every node due in the same instant saw 0 in flight.
 */
import {
  clients,
  createFakeNode,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes
} from "@nodemend/cluster-harness"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPool,
  nodeEvents,
  POOL_LABEL,
  scenario,
  setKernelReady,
  testConfig,
  waitForEvent
} from "./helpers.ts"

const { kc, core } = clients()
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

  it("a node whose repair failed relabels itself into another pool: its slot stays in its own pool, which says it is held", async () => {
    // Issue #24: the slot followed the node's own pool label, so a node under repair (or failed) could take another
    // pool's only slot (10% of 10) for good. Real node credentials make the move, as an attacker on the node would.
    const s = scenario("hop")
    const poolY = `${s.tag}-y`
    const x = (await createPool(core, s, 10)).map((n) => n.metadata?.name ?? "")
    const y = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        createFakeNode(core, { name: `${s.tag}-y${i}`, labels: { ...s.labels, [POOL_LABEL]: poolY } })
      )
    ).then((ns) => ns.map((n) => n.metadata?.name ?? ""))
    const config = testConfig(ns, s, {
      maxUnhealthyPercent: 40,
      // No replacement within 1 s and onNoCapacity fail: the first repair fails and keeps its record.
      replacement: { timeoutSeconds: 1, onNoCapacity: "fail" },
      kwok: { replacementDelaySeconds: 30, zonalShiftConfigMap: `shifts-${s.tag}` }
    })
    running.push(await startControllerProcess(kubeconfig, config))
    const attacker = x[0] ?? ""
    await setKernelReady(core, attacker, "False")
    await waitForEvent(core, attacker, "RepairFailed", 60_000)

    const asNode = await nodeCore(kc, attacker)
    await asNode.patchNode(
      { name: attacker, body: { metadata: { labels: { [POOL_LABEL]: poolY } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    // A genuinely failing node of pool y gets y's one slot.
    const victim = y[3] ?? ""
    await setKernelReady(core, victim, "False")
    const started = await waitForEvent(core, victim, "RepairStarted", 30_000)
    expect(started[0]?.message).toContain(`pool ${poolY}`)
    expect(await nodeEvents(core, victim, "RepairQueued")).toEqual([])

    // Pool x's one slot is held by the failed repair, and the queued node is told so and what to run.
    const next = x[5] ?? ""
    await setKernelReady(core, next, "False")
    const queued = await waitForEvent(core, next, "RepairQueued", 30_000)
    expect(queued[0]?.type).toBe("Warning")
    expect(queued[0]?.message).toMatch(new RegExp(`1 of them FAILED .*${attacker}.*kubectl nodemend retry`))
    // What `kubectl nodemend abandon` does (the node vetoed, its journal deleted): the slot is free within the
    // recheck, not at resync. (A retry would give it to the attacker itself, rightly: its proven pool is x, whatever
    // its label says, and it has waited longest.)
    await core.patchNode(
      { name: attacker, body: { metadata: { annotations: { "nodemend.io/do-not-repair": "true" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await core.deleteNamespacedConfigMap({ name: `nodemend-repair-${attacker}`, namespace: ns })
    await waitForEvent(core, next, "RepairStarted", 30_000)
  }, 180_000)
})
