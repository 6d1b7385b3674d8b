/**
 * The replacement health gate on a real cluster (issue #41), kwok provider: a GPU node's first replacement comes up
 * Ready but with a GPU fault (AcceleratedHardwareReady=False, written as its agent would as soon as it appears).
 * It is not capacity: no pod moves onto it, a second replacement is launched and comes up healthy, the pods move
 * once; the broken replacement is a relapse of the repair and gets its own repair.
 */
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ledgerConfigMapName, parseLedger } from "../../src/domain/RelapseLedger.ts"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  GPU_REASON as REASON,
  GPU_REPLACE,
  gpuPoolWithWorkload,
  onEachReplacement,
  setGpuHealth
} from "./gpuPool.ts"
import {
  eventTime,
  journalSampler,
  nodeEvents,
  readNodeOrUndefined,
  scenario,
  testConfig,
  waitForEvent
} from "./helpers.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "rhealth")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

const gpuFault = (name: string, status: "True" | "False") => setGpuHealth(core, name, status)

/** The replacements of `node` in order of appearance; the first gets the GPU fault as soon as it exists. */
const breakFirstReplacement = (node: string) =>
  onEachReplacement(core, node, (name, index) => (index === 0 ? gpuFault(name, "False") : undefined))

describe("replacement health gate", () => {
  it("a replacement with a GPU fault is not capacity: the drain waits, a second one comes up healthy, pods move once", async () => {
    const s = scenario("rhealth")
    const { target, pod } = await gpuPoolWithWorkload(core, ns, s)
    running.push(
      await startControllerProcess(
        kubeconfig,
        testConfig(ns, s, {
          ...GPU_REPLACE,
          replacement: { timeoutSeconds: 90, healthTimeoutSeconds: 60, maxAttempts: 2 }
        })
      )
    )
    const replacements = breakFirstReplacement(target)
    const facts = journalSampler(core, ns, target)
    try {
      await gpuFault(target, "False")

      const unhealthy = (await waitForEvent(core, target, "ReplacementUnhealthy", 60_000))[0]!
      const first = replacements.seen[0]!
      expect(unhealthy.message).toContain(`replacement ${first} is not capacity`)
      expect(unhealthy.message).toContain(`AgentCondition: AcceleratedHardwareReady=False (${REASON})`)
      expect(unhealthy.message).toContain("launching another (1 of 2 attempts failed)")
      // No pod moved onto it: the target's pod is where it was when the first replacement failed the gate.
      expect(
        (await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })).spec?.nodeName
      ).toBe(target)

      await waitForEvent(core, target, "RepairSucceeded", 120_000)
      await facts.stop()
      const second = replacements.seen[1]
      expect(second).toBeDefined()
      expect(second).not.toBe(first)
      const succeeded = (await nodeEvents(core, target, "RepairSucceeded"))[0]!
      expect(succeeded.message).toContain(`replaced by ${second}`)
      // The drain began once, after the first replacement failed and the second was healthy.
      const drained = await nodeEvents(core, target, "Drained")
      expect(drained.length).toBe(1)
      expect(eventTime(drained[0]!)).toBeGreaterThanOrEqual(eventTime(unhealthy))
      const ready = await nodeEvents(core, target, "ReplacementReady")
      expect(ready.map((e) => e.message)).toEqual([`replacement ${second} is Ready`])
      const draining = facts.records.find((r) => r.drainStartedAt !== undefined) as
        | { drainStartedAt: string; replacement?: { nodeName?: string }; failedReplacements?: unknown[] }
        | undefined
      expect(draining?.replacement?.nodeName).toBe(second)
      expect(draining?.failedReplacements).toMatchObject([{ nodeName: first, check: "AgentCondition" }])
      expect(Date.parse(draining!.drainStartedAt)).toBeGreaterThanOrEqual(eventTime(unhealthy) - 1000)
      expect((await nodeEvents(core, target, "TerminatingInstance")).length).toBe(1)
      expect(replacements.seen.length).toBe(2)

      // The broken replacement is a relapse of the repair, and is repaired itself by the same policy.
      const cm = await core.readNamespacedConfigMap({
        namespace: ns,
        name: ledgerConfigMapName(s.pool, REASON)
      })
      const ledger = parseLedger(cm.data?.ledger ?? "")
      expect(ledger._tag).toBe("Success")
      if (ledger._tag === "Success")
        expect(ledger.success.relapses).toContainEqual(
          expect.objectContaining({ node: first, kind: "replacement", repairedNode: target })
        )
      await waitForEvent(core, first, "RepairStarted", 60_000)
      await waitFor(
        "the broken replacement gone",
        async () => ((await readNodeOrUndefined(core, first)) === undefined ? true : undefined),
        { timeoutMs: 120_000 }
      )
    } finally {
      await replacements.stop()
      await facts.stop()
    }
  }, 300_000)
})
