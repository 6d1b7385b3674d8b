/**
 * Which queued repair goes first (#28 part 3) on the real cluster: one repair at a time in the pool, a flood of
 * promoted warnings (AppCrash, a catalog Event the agent promoted to KernelReady=False) queues up first, then a
 * genuine fatal fault (ForkFailedOutOfPIDs) falls due: it takes the next free slot ahead of the flood that waited
 * longer, and each RepairQueued says its position and why.
 */
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  patchNodeCondition,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPool,
  eventTime,
  nodeEvents,
  scenario,
  setKernelReady,
  testConfig,
  waitForEvent
} from "./helpers.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "qorder")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

const appCrash = (name: string) =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status: "False",
    reason: "AppCrash",
    message: "app crashed (queue order test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

const startedAt = async (node: string) => eventTime((await nodeEvents(core, node, "RepairStarted"))[0]!)

describe("queue order", () => {
  it("a genuine fault overtakes a flood of promoted warnings that waited longer", async () => {
    const s = scenario("qorder")
    const nodes = (await createPool(core, s, 12)).map((n) => n.metadata?.name ?? "")
    const config = testConfig(ns, s, {
      maxUnhealthyPercent: 100,
      maxInFlight: "1",
      reasons: { AppCrash: { action: "Replace" } },
      kwok: { replacementDelaySeconds: 10, zonalShiftConfigMap: `shifts-${s.tag}` }
    })
    running.push(await startControllerProcess(kubeconfig, config))
    const flood = nodes.slice(0, 4)
    const genuine = nodes[4]!
    await Promise.all(flood.map(appCrash))
    // The flood is due: the first of it starts, the rest queue, before the genuine fault appears.
    const firstStarted = await waitFor(
      "the first of the flood started",
      async () => {
        for (const n of flood) if ((await nodeEvents(core, n, "RepairStarted")).length > 0) return n
        return undefined
      },
      { timeoutMs: 30_000, intervalMs: 250 }
    )
    const rest = flood.filter((n) => n !== firstStarted)
    await Promise.all(rest.map((n) => waitForEvent(core, n, "RepairQueued", 30_000)))
    await setKernelReady(core, genuine, "False")
    const queued = (await waitForEvent(core, genuine, "RepairQueued", 30_000))[0]!
    expect(queued.message).toMatch(
      /queue position 1 of 4 \(rank fatal \+90m, waiting 0(\.\d)?m, backoff -0m\)/
    )
    const floodQueued = (await nodeEvents(core, rest[0]!, "RepairQueued"))[0]!
    expect(floodQueued.message).toMatch(/queue position \d of \d \(rank promoted \+0m/)

    await waitForEvent(core, genuine, "RepairStarted", 90_000)
    const genuineAt = await startedAt(genuine)
    // None of the waiting flood started between the first and the genuine fault.
    for (const n of rest) {
      const e = await nodeEvents(core, n, "RepairStarted")
      if (e.length > 0) expect(eventTime(e[0]!)).toBeGreaterThan(genuineAt)
    }
    // And the flood is not starved: it is repaired after.
    await Promise.all(rest.map((n) => waitForEvent(core, n, "RepairSucceeded", 120_000)))
  }, 240_000)
})
