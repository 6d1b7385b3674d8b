// Issue #37 item 3 on the real cluster: a node writes KernelReady=False on itself, with its own kubelet
// credentials, and a lastTransitionTime of 1970-01-02. The toleration (20 s) runs from the controller's first sight
// of that status, not from the time the node wrote, and that first sight survives the controller's SIGKILL and a
// new leader (kept in the ConfigMap nodemend-sightings). Trusting the node's time, the repair starts at once;
// forgetting the sight at the restart, it starts 20 s after the new leader's start.
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  waitFor
} from "@nodemend/cluster-harness"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPool,
  eventTime,
  handoverLease,
  nodeEvents,
  scenario,
  sleep,
  testConfig,
  waitForEvent
} from "./helpers.ts"

const { kc, core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const TOLERATION_S = 20
let ns = ""
const running: ControllerProcess[] = []

beforeAll(async () => {
  ns = await createTestNamespace(core, "nodetimes")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("times a node writes count for nothing before what the controller saw", () => {
  it("a 1970 lastTransitionTime skips no toleration, and the first sight survives a SIGKILL and a new leader", async () => {
    const s = scenario("nodetimes")
    const [victim] = await createPool(core, s, 3)
    const name = victim!.metadata!.name!
    const config = testConfig(ns, s, {
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: TOLERATION_S }],
      ...handoverLease(s)
    })
    running.push(await startControllerProcess(kubeconfig, config, `${s.tag}-1`))
    await sleep(2000)
    const asNode = await nodeCore(kc, name)
    const wroteAt = Date.now()
    await asNode.patchNodeStatus(
      {
        name,
        body: {
          status: {
            conditions: [
              {
                type: "KernelReady",
                status: "False",
                reason: "ForkFailedOutOfPIDs",
                message: "fork failed (forged time)",
                lastHeartbeatTime: new Date(),
                lastTransitionTime: new Date("1970-01-02T00:00:00Z")
              }
            ]
          }
        }
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
    )
    // The first sight is written within a second of being taken.
    await waitFor("the first sight in nodemend-sightings", async () => {
      const cm = await core
        .readNamespacedConfigMap({ name: "nodemend-sightings", namespace: ns })
        .catch(() => undefined)
      return JSON.stringify(cm?.data ?? {}).includes(name) ? true : undefined
    })
    await sleep(6000)
    expect(await nodeEvents(core, name, "RepairStarted")).toEqual([])
    await running[0]!.kill("SIGKILL")
    running.splice(0)
    running.push(await startControllerProcess(kubeconfig, config, `${s.tag}-2`))
    const [started] = await waitForEvent(core, name, "RepairStarted", 90_000)
    const afterWrite = (eventTime(started!) - wroteAt) / 1000
    console.log(
      `1970 lastTransitionTime: RepairStarted ${afterWrite.toFixed(1)} s after the write (toleration ${TOLERATION_S} s)`
    )
    // Not before its toleration from the first sight; not a whole toleration after the new leader's start either.
    expect(afterWrite).toBeGreaterThanOrEqual(TOLERATION_S - 2)
    expect(afterWrite).toBeLessThan(TOLERATION_S + 12)
  }, 180_000)
})
