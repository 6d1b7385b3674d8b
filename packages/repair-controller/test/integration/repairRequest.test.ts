/**
 * RepairRequests against the real cluster (issue #41 item 4, ADR 0020): the shipped CRD, admission policy and
 * requester role; a workload (a ServiceAccount granted nodemend-repair-requester) asks, the real controller decides
 * through its gates. A request repairs a healthy node and the record and RepairStarted say who asked; a request the
 * breaker holds says in its status and the node's Event what lifts it, and goes on once it lifts; the API server
 * refuses a forged requestedBy and any change of a spec; a node's own kubelet credentials cannot create one.
 */
import { CustomObjectsApi } from "@kubernetes/client-node"
import { clients, createTestNamespace, deleteNamespace, deleteRunNodes } from "@nodemend/cluster-harness"
import { nodeIdentity } from "@nodemend/cluster-harness/nodeIdentity"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPool,
  repairRecord,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent,
  waitForNodeGone
} from "./helpers.ts"
import {
  createRequest,
  installRepairRequestCrd,
  installShippedPolicy,
  RR,
  removeShippedPolicy,
  requester,
  waitForPhase
} from "./repairRequestSupport.ts"

const { kc, core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const running: ControllerProcess[] = []
const namespaces: string[] = []
let createdPolicy = false

/** A namespace for one test's controller and requests, with a workload allowed to ask. */
const setup = async (prefix: string) => {
  const ns = await createTestNamespace(core, prefix)
  namespaces.push(ns)
  await installRepairRequestCrd(kc, ns)
  return { ns, trainer: await requester(kc, core, ns, "trainer") }
}

beforeAll(async () => {
  createdPolicy = await installShippedPolicy(kc)
  // The controller counts a request as checked only once the policy is seconds old (POLICY_SETTLE_MS).
  if (createdPolicy) await sleep(4_000)
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  for (const ns of namespaces) await deleteNamespace(core, ns)
  if (createdPolicy) await removeShippedPolicy(kc)
})

describe("kubectl nodemend repair's RepairRequest on a real cluster", () => {
  it("a workload's request repairs a healthy node; the record and RepairStarted say who asked; Done at the end", async () => {
    const { ns, trainer } = await setup("rreq-ok")
    const s = scenario("rreq-ok")
    const nodes = await createPool(core, s, 5)
    const target = nodes[0]?.metadata?.name ?? ""
    running.push(await startControllerProcess(kubeconfig, testConfig(ns, s, { maxInFlight: "1" })))
    await createRequest(trainer.kc, ns, "straggler", {
      nodeName: target,
      reason: "ManualRepairRequested",
      message: "rank 3 is 40% slower than its peers",
      requestedBy: trainer.username
    })
    const started = await waitForEvent(core, target, "RepairStarted", 60_000)
    expect(started[0]?.message).toContain(`requested by ${trainer.username} (RepairRequest ${ns}/straggler)`)
    expect(started[0]?.message).toContain("rank 3 is 40% slower")
    const status = await waitForPhase(kc, ns, "straggler", "Started")
    expect(status.reason).toBe("Requested")
    const record = (await repairRecord(core, ns, target)) as unknown as Record<string, unknown> | undefined
    expect(record).toMatchObject({
      id: status.repairId,
      conditionType: "RepairRequested",
      reason: "ManualRepairRequested",
      requestedBy: { username: trainer.username, request: `${ns}/straggler` }
    })
    await waitForNodeGone(core, target, 120_000)
    const done = await waitForPhase(kc, ns, "straggler", "Done", 60_000)
    expect([done.outcome, done.repairId]).toEqual(["Succeeded", status.repairId])
  }, 240_000)

  it("a request the breaker holds says what lifts it (status and Event), and goes on when it lifts", async () => {
    const { ns, trainer } = await setup("rreq-held")
    const s = scenario("rreq-held")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata?.name ?? "")
    const [target = "", sickA = "", sickB = ""] = nodes
    await setKernelReady(core, sickA, "False")
    await setKernelReady(core, sickB, "False")
    running.push(
      await startControllerProcess(
        kubeconfig,
        testConfig(ns, s, { maxUnhealthyPercent: 20, maxInFlight: "1" })
      )
    )
    await createRequest(trainer.kc, ns, "held", {
      nodeName: target,
      reason: "ManualRepairRequested",
      requestedBy: trainer.username
    })
    const held = await waitForPhase(kc, ns, "held", "Held")
    expect(held.reason).toBe("Blocked")
    expect(held.message).toMatch(
      /breaker of pool .* is open: 2 of 5 nodes are unhealthy.*lifts when at most 1 are/
    )
    const blocked = await waitForEvent(core, target, "RepairBlocked")
    expect(blocked[0]?.message).toContain("2 of 5")
    // Nothing moves while it is held.
    await sleep(3_000)
    expect((await waitForPhase(kc, ns, "held", "Held")).reason).toBe("Blocked")
    expect(await repairRecord(core, ns, target)).toBeUndefined()
    // What lifts it: the pool heals.
    await setKernelReady(core, sickA, "True")
    await setKernelReady(core, sickB, "True")
    const started = await waitForPhase(kc, ns, "held", "Started", 60_000)
    expect(started.repairId).toBeDefined()
  }, 180_000)

  it("the API server refuses a forged requestedBy and any change of a request's spec", async () => {
    const { ns, trainer } = await setup("rreq-forged")
    const forged = await createRequest(trainer.kc, ns, "forged", {
      nodeName: "any-node",
      reason: "ManualRepairRequested",
      requestedBy: "alice@example.com"
    }).then(
      () => undefined,
      (e: { code?: number; body?: unknown }) => e
    )
    expect(forged?.code).toBe(403)
    expect(String(forged?.body)).toContain("must be the creator's own username")
    await createRequest(trainer.kc, ns, "honest", {
      nodeName: "any-node",
      reason: "ManualRepairRequested",
      requestedBy: trainer.username
    })
    const custom = trainer.kc.makeApiClient(CustomObjectsApi)
    const before = (await custom.getNamespacedCustomObject({ ...RR, namespace: ns, name: "honest" })) as {
      spec: Record<string, unknown>
    }
    const changed = await custom
      .replaceNamespacedCustomObject({
        ...RR,
        namespace: ns,
        name: "honest",
        body: { ...before, spec: { ...before.spec, nodeName: "another-node" } }
      })
      .then(
        () => undefined,
        (e: { code?: number }) => e
      )
    expect([403, 422]).toContain(changed?.code)
  }, 60_000)

  it("a node's own kubelet credentials cannot create a RepairRequest (RBAC: nodes are never requesters)", async () => {
    const { ns } = await setup("rreq-node")
    const s = scenario("rreq-node")
    const [n] = await createPool(core, s, 1)
    const name = n?.metadata?.name ?? ""
    const asNode = await nodeIdentity(kc, name)
    const refused = await createRequest(asNode, ns, "from-node", {
      nodeName: name,
      reason: "ManualRepairRequested",
      requestedBy: `system:node:${name}`
    }).then(
      () => undefined,
      (e: { code?: number; body?: unknown }) => e
    )
    expect(refused?.code).toBe(403)
    const why = (JSON.parse(String(refused?.body)) as { message: string }).message
    expect(why).toContain(`User "system:node:${name}" cannot create resource "repairrequests"`)
  }, 60_000)
})
