/**
 * Relapse holds end to end (#28 part 1) on the real cluster with the kwok provider: the pool's "launch template
 * is broken", so every replacement comes up with the fault its original was repaired for. After `threshold`
 * relapses the controller holds the next repair of that reason in that pool (RepairHeld with the evidence, the
 * ledger in the journal, the metric), a restarted controller keeps the hold, and `kubectl nodemend release`
 * (the plugin, run as a user would) lifts it: the held node is then repaired.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ledgerConfigMapName, parseLedger } from "../../src/domain/RelapseLedger.ts"
import { breakReplacements } from "./brokenReplacements.ts"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPool,
  handoverLease,
  IT_LABEL,
  nodeEvents,
  repairPhase,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent,
  waitForHeldReplacement
} from "./helpers.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")
const PLUGIN = join(ROOT, "packages/kubectl-nodemend/src/main.ts")
const REASON = "ForkFailedOutOfPIDs"
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "relapse")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("relapse hold", () => {
  it("replacements come up with the same fault: held after 2 relapses, kept across a restart, released by kubectl nodemend release", async () => {
    const s = scenario("relapse")
    const [first] = (await createPool(core, s, 4)).map((n) => n.metadata?.name ?? "")
    // The toleration outlasts a kwok repair, so each relapse is on record before the relapsed node falls due.
    const config = testConfig(ns, s, {
      ...handoverLease(s),
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 12 }],
      maxUnhealthyPercent: 100,
      maxInFlight: "100%",
      relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 }
    })
    running.push(await startControllerProcess(kubeconfig, config))

    // The broken launch template: every replacement of the pool comes up Ready, then with the same fault.
    const template = breakReplacements(core, `${IT_LABEL}=${s.tag},nodemend.io/replacement-of`)

    try {
      await setKernelReady(core, first ?? "", "False")
      const held = await waitForHeldReplacement(core, () => template.faulted, 150_000)
      // The cause and the evidence: which repairs, which replacements relapsed, how fast.
      expect(held.message).toMatch(
        new RegExp(
          `2 nodes of pool ${s.pool} came back with ${REASON} within 10m of a repair \\(threshold 2\\)`
        )
      )
      expect(held.message).toMatch(/replacement \S+ of \S+ relapsed \d+s after it came up \(repair /)
      expect(held.message).toContain(`kubectl nodemend release ${s.pool} ${REASON}`)
      // Held: no repair of it starts.
      await sleep(4000)
      expect(await repairPhase(core, ns, held.node)).toBeUndefined()
      expect((await nodeEvents(core, held.node, "RepairStarted")).length).toBe(0)

      // The ledger is in the journal, with the hold.
      const cm = await core.readNamespacedConfigMap({
        namespace: ns,
        name: ledgerConfigMapName(s.pool, REASON)
      })
      const ledger = parseLedger(cm.data?.ledger ?? "")
      expect(ledger._tag).toBe("Success")
      if (ledger._tag === "Success") {
        expect(ledger.success.hold?.evidence.length).toBe(2)
        // The first is the first repair's own replacement; the next, a replacement's replacement that came up
        // (and relapsed) while its parent's repair still ran, is a node of the pool newer than the first repair.
        const kinds = ledger.success.hold?.evidence.map((r) => r.kind) ?? []
        expect(kinds[0]).toBe("replacement")
        expect(kinds.every((k) => k === "replacement" || k === "fresh")).toBe(true)
        expect(template.faulted).toContain(ledger.success.hold?.evidence[1]?.node)
      }
      const metrics = (await running[0]!.get("/metrics")).body
      expect(metrics).toMatch(/nodemend_controller_relapse_holds(\{[^}]*\})? 1/)
      expect(metrics).toMatch(
        new RegExp(`nodemend_controller_relapse_hold\\{[^}]*pool="${s.pool}"[^}]*\\} 1`)
      )

      // A restart keeps the hold: the new controller holds the same node again (its own RepairHeld), repairs nothing.
      await killControllers(running, false)
      running.push(await startControllerProcess(kubeconfig, config))
      await waitFor(
        "a second RepairHeld after the restart",
        async () => ((await nodeEvents(core, held.node, "RepairHeld")).length >= 2 ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 500 }
      )
      expect(await repairPhase(core, ns, held.node)).toBeUndefined()

      // The launch template is fixed; an operator releases the hold with the plugin.
      await template.fix()
      const out = await promisify(execFile)(
        NODE,
        [
          "--conditions=source",
          PLUGIN,
          "release",
          s.pool,
          REASON,
          "--kubeconfig",
          kubeconfig,
          "--controller-namespace",
          ns
        ],
        { cwd: ROOT }
      )
      expect(out.stdout).toContain(`deleted the relapse ledger of ${REASON} in ${s.pool}`)
      expect(out.stdout).toMatch(/recorded Event RepairHoldReleased on Node/)
      // The controller sees the release and repairs the held node.
      await waitForEvent(core, held.node, "RepairSucceeded", 90_000)
    } finally {
      await template.fix()
    }
  }, 300_000)
})
