/**
 * Flapping in real time against the real controller: a node's KernelReady flips False/True every `flip`
 * seconds for `minutes` while its toleration is longer than a flap; a control node in the same pool stays False
 * and must be repaired (the controller is alive and acting). CI: 2 s flaps, 6 s toleration, 40 s; long
 * (NODEMEND_RELIABILITY_LONG=1): 30 s flaps, 60 s toleration, 10 minutes.
 */
import { clients, createTestNamespace, deleteNamespace, deleteRunNodes } from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type ControllerProcess,
  killControllers,
  startControllerProcess
} from "../integration/controllerProcess.ts"
import {
  createPool,
  nodeEvents,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent
} from "../integration/helpers.ts"
import { pick, recordFigures } from "./fleet.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "rel-flap")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("flapping condition, real time, real controller", () => {
  it("a condition flipping faster than its toleration is never repaired; one held False is", async () => {
    const flipSeconds = pick(2, 30)
    const tolerationSeconds = pick(6, 60)
    const seconds = pick(40, 600)
    const s = scenario("flap")
    const [flappy, control] = (await createPool(core, s, 10)).map((n) => n.metadata?.name ?? "")
    const config = testConfig(ns, s, {
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds }]
    })
    running.push(await startControllerProcess(kubeconfig, config))
    const end = Date.now() + seconds * 1000
    let flips = 0
    await setKernelReady(core, control!, "False")
    // The longest stretch False, from before the False patch was sent to after the True patch returned, plus
    // the 1 s the API server's whole-second lastTransitionTime can take off: must stay below the toleration.
    let longestFalseMs = 0
    let falseSince = 0
    while (Date.now() < end) {
      const bad = flips % 2 === 0
      const sent = Date.now()
      await setKernelReady(core, flappy!, bad ? "False" : "True")
      if (bad) falseSince = sent
      else longestFalseMs = Math.max(longestFalseMs, Date.now() - falseSince + 1000)
      flips++
      await sleep(flipSeconds * 1000)
    }
    const endedFalse = flips % 2 === 1
    await setKernelReady(core, flappy!, "True")
    if (endedFalse) longestFalseMs = Math.max(longestFalseMs, Date.now() - falseSince + 1000)
    await waitForEvent(core, control!, "RepairStarted", 60_000)
    const started = await nodeEvents(core, flappy!, "RepairStarted")
    const tainted = (await core.readNode({ name: flappy! })).spec?.taints?.some(
      (t) => t.key === "nodemend.io/repair"
    )
    recordFigures("flapping-real", {
      flipSeconds,
      tolerationSeconds,
      seconds,
      flips,
      longestFalseMs,
      repairsOfFlappy: started.length
    })
    expect(longestFalseMs).toBeLessThan(tolerationSeconds * 1000)
    expect(started).toEqual([])
    expect(tainted ?? false).toBe(false)
  })
})
