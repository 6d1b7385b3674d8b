// The chart on kind (`npm run kind:up`: deploy/kind/kind-config.yaml's three nodes, real kubelets and containerd in
// node containers, the images `npm run images` built, kwok in the cluster): the agent DaemonSet reports on the
// kind nodes and detects a fault written into one node container's host, and the in-cluster controller (kwok
// provider) repairs a kwok node end to end: a terminal condition, the toleration, capacity first (a Ready
// replacement), drain, terminate.
import type { V1Node } from "@kubernetes/client-node"
import { CONDITION_TYPES } from "../../../reason-codes/src/types.ts"
import { createReadyFakeNode, patchNodeCondition, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nodeExec } from "../../../../tools/kind/kind.mjs"
import { type Fault, faultNamed } from "../../../demo/src/faults.mjs"
import {
  controllerEventReasons,
  deleteWithReplacements,
  KWOK_REPAIR_CONFIG,
  replacementsOf,
  waitForRepairedAway
} from "../realnode/kwokRepair.ts"
import {
  AGENT_NS,
  admin,
  CONTROLLER_NS,
  installChart,
  readyPods,
  uninstallChart
} from "../realnode/support.ts"

const CONTROL_PLANE = "nodemend-control-plane"
const WORKERS = ["nodemend-worker", "nodemend-worker2"]
/** The kind:up install (kwok provider), with a 2 s toleration for the test's condition and only kwok nodes managed. */
const VALUES = { controller: { cloudProvider: "kwok", config: KWOK_REPAIR_CONFIG } }
const KIND_VALUES = { controller: { cloudProvider: "kwok" } }

const condition = (n: V1Node, type: string) => n.status?.conditions?.find((c) => c.type === type)
let kwokNode = ""
/** Whether kind:up had installed the chart (`npm test`'s kind phase loads the images only). */
let hadChart = false

beforeAll(async () => {
  hadChart =
    (
      await admin().apps.listNamespacedDeployment({
        namespace: CONTROLLER_NS,
        labelSelector: "app.kubernetes.io/name=nodemend-controller"
      })
    ).items.length > 0
  installChart(VALUES)
}, 300_000)
afterAll(async () => {
  const { core } = admin()
  if (kwokNode) await deleteWithReplacements(core, kwokNode)
  // The cluster as the test found it: kind:up's install, or no chart.
  if (hadChart) installChart(KIND_VALUES)
  else uninstallChart()
}, 300_000)

describe("the kind cluster", () => {
  it("runs deploy/kind/kind-config.yaml's nodes: Ready, the workers in the general pool in two zones", async () => {
    const nodes = (await admin().core.listNode({ labelSelector: "!kwok.x-k8s.io/node" })).items
    expect(nodes.map((n) => n.metadata!.name).sort()).toEqual([CONTROL_PLANE, ...WORKERS])
    for (const n of nodes) {
      expect(condition(n, "Ready")?.status).toBe("True")
      expect(n.status?.nodeInfo?.kubeletVersion).toBe("v1.37.2")
    }
    const workers = nodes.filter((n) => WORKERS.includes(n.metadata!.name!))
    expect(workers.map((n) => n.metadata!.labels!["nodemend.io/pool"])).toEqual(["general", "general"])
    expect(workers.map((n) => n.metadata!.labels!["topology.kubernetes.io/zone"]).sort()).toEqual([
      "zone-a",
      "zone-b"
    ])
  })
})

describe("the chart on kind", () => {
  it("runs the controller's two replicas and an agent on every kind node, from the loaded images", async () => {
    const controllers = await readyPods(CONTROLLER_NS, "nodemend-controller", 2)
    expect(controllers.map((p) => p.spec?.containers[0]?.image)).toEqual([
      "ghcr.io/nodemend/controller:0.1.0",
      "ghcr.io/nodemend/controller:0.1.0"
    ])
    const agents = (
      await admin().core.listNamespacedPod({
        namespace: AGENT_NS,
        labelSelector: "app.kubernetes.io/name=nodemend-agent"
      })
    ).items.filter((p) => [CONTROL_PLANE, ...WORKERS].includes(p.spec?.nodeName ?? ""))
    expect(agents.map((p) => p.spec?.nodeName).sort()).toEqual([CONTROL_PLANE, ...WORKERS])
  })

  it("has the agent write its conditions on the kind nodes, healthy, with reason codes", async () => {
    const { core } = admin()
    for (const name of [CONTROL_PLANE, ...WORKERS]) {
      const written = await waitFor(
        `the agent's conditions on ${name}`,
        async () => {
          const n = await core.readNode({ name })
          const ours = (n.status?.conditions ?? []).filter((c) =>
            (CONDITION_TYPES as readonly string[]).includes(c.type)
          )
          // Every check has run once: all four non-accelerator conditions are there.
          return ours.length === 4 ? ours : undefined
        },
        { timeoutMs: 90_000, intervalMs: 1000 }
      )
      // No accelerator on a kind node: AcceleratedHardwareReady is absent, not Unknown.
      expect(written.map((c) => `${c.type}=${c.status}`).sort()).toEqual([
        "ContainerRuntimeReady=True",
        "KernelReady=True",
        "NetworkingReady=True",
        "StorageReady=True"
      ])
      for (const c of written) expect(c.reason).toMatch(/^[A-Z][A-Za-z0-9]+$/)
    }
  })
})

/** Appends `fault`'s lines to its log file in the kind node container, as the program that logs them would. */
const writeInNode = (node: string, fault: Fault) => {
  if (fault.where.source !== "file") throw new Error(`${fault.name} is not written to a log file`)
  const path = `/${fault.where.path}`
  const lines = fault.lines?.() ?? []
  nodeExec(
    node,
    ["sh", "-c", `mkdir -p "$(dirname "$1")" && cat >> "$1"`, "sh", path],
    `${lines.join("\n")}\n`
  )
}

/** Waits for the agent's condition of `type` on `node` to have `status`; returns it. */
const agentCondition = (node: string, type: string, status: "True" | "False") =>
  waitFor(
    `${type}=${status} on ${node}`,
    async () => {
      const c = condition(await admin().core.readNode({ name: node }), type)
      return c?.status === status ? c : undefined
    },
    { timeoutMs: 60_000, intervalMs: 100 }
  )

describe("an agent-detected fault on a kind node", () => {
  const node = WORKERS[1]!
  afterAll(() => {
    nodeExec(node, ["rm", "-f", "/var/log/aws-routed-eni/ipamd.log"])
  })

  it("turns ipamd's log lines in the node container into NetworkingReady=False, and back to True", async () => {
    const fault = faultNamed("ipamd-no-token")!
    const written = Date.now()
    writeInNode(node, fault)
    const down = await agentCondition(node, fault.conditionType, "False")
    console.log(
      `[kind] ipamd lines in ${node} -> ${fault.conditionType}=False on the API server: ${Date.now() - written} ms`
    )
    expect(down.reason).toBe(fault.reason)
    // The fault is this node container's alone: the other kind nodes stay NetworkingReady=True.
    for (const other of [CONTROL_PLANE, WORKERS[0]!])
      expect(condition(await admin().core.readNode({ name: other }), fault.conditionType)?.status).toBe(
        "True"
      )

    writeInNode(node, faultNamed("ipamd-ok")!)
    const up = await agentCondition(node, fault.conditionType, "True")
    expect(up.reason).not.toBe(fault.reason)
  })
})

describe("a repair on kind: condition -> in-cluster controller -> Ready replacement, drain, terminate", () => {
  it("replaces and deletes the kwok node, and leaves the kind nodes alone", async () => {
    const { core } = admin()
    // A taint keeps real pods (the controller's) off the kwok node: kwok would only pretend to run them.
    kwokNode = (
      await createReadyFakeNode(core, {
        taints: [{ key: "kwok.x-k8s.io/node", value: "fake", effect: "NoSchedule" }]
      })
    ).metadata!.name!
    await patchNodeCondition(core, kwokNode, {
      type: "AcceleratedHardwareReady",
      status: "False",
      reason: "NeuronSRAMUncorrectableError",
      message: "the test's stand-in for the agent",
      lastHeartbeatTime: new Date(),
      lastTransitionTime: new Date()
    })
    await waitForRepairedAway(core, kwokNode)
    const replacement = await replacementsOf(core, kwokNode)
    expect(replacement).toHaveLength(1)
    expect(condition(replacement[0]!, "Ready")?.status).toBe("True")
    expect(await controllerEventReasons(core, kwokNode)).toContain("RepairStarted")
    for (const name of [CONTROL_PLANE, ...WORKERS]) {
      const n = await core.readNode({ name })
      expect(n.spec?.taints?.some((t) => t.key.startsWith("nodemend.io/")) ?? false).toBe(false)
    }
  })
})
