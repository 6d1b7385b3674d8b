/**
 * The failure-domain breaker end to end (#28 part 2) on the real cluster with the kwok provider: faults spread over
 * two zones and two pools. Concentrated in one zone (over 20% there, across both pools, while the other zone is
 * under it), that zone's repairs stand down with the figures while the other zone's fault is repaired; when the
 * zone recovers below the threshold, its remaining faults are repaired.
 */
import {
  clients,
  waitFor,
  createFakeNode,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  nodeEvents,
  POOL_LABEL,
  repairPhase,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent,
  ZONE
} from "./helpers.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "zonebrk")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("failure-domain breaker", () => {
  it("faults concentrated in one zone across pools: it stands down with the figures, the other zone repairs; recovery lifts it", async () => {
    const s = scenario("zonebrk")
    const zoneA = `${s.tag}-a`
    const zoneB = `${s.tag}-b`
    // Two pools, each with 5 nodes in zone a and 5 in zone b.
    const names: Record<string, string[]> = { [zoneA]: [], [zoneB]: [] }
    await Promise.all(
      ["p1", "p2"].flatMap((p) =>
        [zoneA, zoneB].flatMap((z) =>
          Array.from({ length: 5 }, async (_, i) => {
            const name = `${s.tag}-${p}-${z.slice(-1)}${i}`
            names[z]!.push(name)
            await createFakeNode(core, {
              name,
              labels: { ...s.labels, [POOL_LABEL]: `${s.tag}-${p}`, [ZONE]: z }
            })
          })
        )
      )
    )
    for (const z of [zoneA, zoneB]) names[z]!.sort()
    const config = testConfig(ns, s, { maxUnhealthyPercent: 50, maxInFlight: "100%" })
    running.push(await startControllerProcess(kubeconfig, config))

    // Zone a: 2 faults in p1 and 2 in p2 (4 of 10, 40%); zone b: 1 (10%).
    const badA = [
      ...names[zoneA]!.filter((n) => n.includes("-p1-")).slice(0, 2),
      ...names[zoneA]!.filter((n) => n.includes("-p2-")).slice(0, 2)
    ]
    const badB = names[zoneB]![0]!
    await Promise.all([...badA, badB].map((n) => setKernelReady(core, n, "False")))

    await waitForEvent(core, badB, "RepairSucceeded", 90_000)
    const standDown = (await waitForEvent(core, badA[0]!, "RepairStandDown", 30_000))[0]!
    expect(standDown.message).toContain(
      `zone ${zoneA} has 4 of 10 nodes unhealthy (40%, over 20%) while ${zoneB} has`
    )
    expect(standDown.message).toContain("the zone, not the nodes, looks at fault")
    for (const n of badA) {
      expect(await repairPhase(core, ns, n)).toBeUndefined()
      expect(await nodeEvents(core, n, "RepairStarted")).toEqual([])
    }
    // The stand-down gauges are written every 15 s (Controller.ts): the next round shows it.
    const metrics = await waitFor(
      "the zone stand-down gauges",
      async () => {
        const body = (await running[0]!.get("/metrics")).body
        return /nodemend_controller_zones_stood_down(\{[^}]*\})? 1/.test(body) ? body : undefined
      },
      { timeoutMs: 20_000, intervalMs: 500 }
    )
    expect(metrics).toMatch(
      new RegExp(`nodemend_controller_zone_stand_down\\{[^}]*zone="${zoneA}"[^}]*\\} 1`)
    )

    // Two of zone a's nodes recover by themselves: 2 of 10 (20%) is not over the threshold; the rest are repaired.
    await Promise.all(badA.slice(0, 2).map((n) => setKernelReady(core, n, "True")))
    await Promise.all(badA.slice(2).map((n) => waitForEvent(core, n, "RepairSucceeded", 90_000)))
    await sleep(500)
    for (const n of badA.slice(0, 2)) expect(await nodeEvents(core, n, "RepairStarted")).toEqual([])
  }, 240_000)
})
