// The whole loop as deployed: an agent pod on the real node watches a kwok node's simulated host (a Neuron
// device and its kernel log), with a token bound to the agent DaemonSet's own pod on that kwok node (what the
// admission policy confines it to); the uncorrectable error it finds becomes AcceleratedHardwareReady=False,
// and the in-cluster controller pod (kwok provider) repairs that node: taint, drain, terminate (delete).
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type { V1Node, V1Pod } from "@kubernetes/client-node"
import { createReadyFakeNode, uniqueName, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  controllerEventReasons,
  deleteWithReplacements,
  KWOK_REPAIR_CONFIG,
  replacementsOf,
  waitForRepairedAway
} from "./kwokRepair.ts"
import {
  AGENT_NS,
  admin,
  CHART_VALUES,
  CONTROLLER_NS,
  installChart,
  readyPods,
  REAL_NODE,
  uninstallChart
} from "./support.ts"

const UPTIME_S = 3600
let host = ""
let node = ""
let simAgent = ""
let secret = ""

/** A healthy simulated host with one Neuron device (what makes the agent manage AcceleratedHardwareReady). */
const makeHost = () => {
  const root = mkdtempSync("/tmp/nodemend-simhost-")
  const write = (rel: string, content: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), content)
  }
  write("proc/sys/kernel/random/boot_id", "6f1c3f6e-1b1a-4d7e-9a55-1f0e2c3d4b5a\n")
  write("proc/stat", `cpu 0 0 0 0\nbtime ${Math.floor(Date.now() / 1000) - UPTIME_S}\n`)
  write("proc/uptime", `${UPTIME_S}.00 ${UPTIME_S}.00\n`)
  write(
    "proc/bus/pci/devices",
    `1000\t1d0f7164\t0\t${Array.from({ length: 14 }, () => "0").join("\t")}\tneuron-driver\n`
  )
  write("dev/kmsg", "")
  return root
}

/** One kernel log record (`prio,seq,usec,-;text`) appended to the simulated /dev/kmsg. */
const appendKmsg = (text: string) => {
  const path = join(host, "dev/kmsg")
  const seq = readFileSync(path, "utf8").split("\n").filter(Boolean).length + 1
  appendFileSync(path, `3,${seq},${UPTIME_S * 1_000_000 + seq},-;${text}\n`)
}

const condition = (n: V1Node, type: string) => n.status?.conditions?.find((c) => c.type === type)

beforeAll(async () => {
  installChart({
    controller: { ...CHART_VALUES.controller, config: KWOK_REPAIR_CONFIG }
  })
  await readyPods(CONTROLLER_NS, "nodemend-controller", 2)
  const { core, kc } = admin()
  node = (await createReadyFakeNode(core)).metadata!.name!
  // The DaemonSet's pod on the kwok node (kwok plays it): the agent's identity there.
  const dsPod: V1Pod = await waitFor("the agent DaemonSet's pod on the kwok node", async () =>
    (
      await core.listNamespacedPod({
        namespace: AGENT_NS,
        labelSelector: "app.kubernetes.io/name=nodemend-agent"
      })
    ).items.find((p) => p.spec?.nodeName === node)
  )
  const token = await core.createNamespacedServiceAccountToken({
    name: "nodemend-agent",
    namespace: AGENT_NS,
    body: {
      spec: {
        audiences: [],
        expirationSeconds: 3600,
        boundObjectRef: {
          apiVersion: "v1",
          kind: "Pod",
          name: dsPod.metadata!.name!,
          uid: dsPod.metadata!.uid!
        }
      }
    }
  })
  secret = uniqueName("sim-agent-token")
  await core.createNamespacedSecret({
    namespace: AGENT_NS,
    body: {
      metadata: { name: secret },
      stringData: {
        token: token.status?.token ?? "",
        "ca.crt": Buffer.from(kc.getCurrentCluster()!.caData!, "base64").toString("utf8"),
        namespace: AGENT_NS
      }
    }
  })
  host = makeHost()
  simAgent = uniqueName("sim-agent")
  // The shipped agent image and securityContext, on the real node, reading the simulated host as its /host.
  await core.createNamespacedPod({
    namespace: AGENT_NS,
    body: {
      metadata: { name: simAgent, labels: { "app.kubernetes.io/name": "nodemend-sim-agent" } },
      spec: {
        nodeSelector: { "nodemend.io/real-node": "true" },
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "agent",
            image: "ghcr.io/nodemend/agent:0.1.0",
            imagePullPolicy: "IfNotPresent",
            command: ["node", "/opt/nodemend/dist/nodemend-agent.mjs"],
            args: [`--node-name=${node}`, "--host-root=/host"],
            securityContext: { readOnlyRootFilesystem: true },
            volumeMounts: [
              { name: "host", mountPath: "/host", readOnly: true },
              { name: "token", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
              { name: "tmp", mountPath: "/tmp" }
            ]
          }
        ],
        volumes: [
          { name: "host", hostPath: { path: host, type: "Directory" } },
          { name: "token", secret: { secretName: secret } },
          { name: "tmp", emptyDir: {} }
        ]
      }
    }
  })
  await waitFor(
    "the simulated host's agent managing AcceleratedHardwareReady on the kwok node",
    async () => condition(await core.readNode({ name: node }), "AcceleratedHardwareReady")?.status === "True",
    { timeoutMs: 90_000, intervalMs: 500 }
  )
}, 400_000)

afterAll(async () => {
  const { core } = admin()
  await core
    .deleteNamespacedPod({ name: simAgent, namespace: AGENT_NS, gracePeriodSeconds: 0 })
    .catch(() => undefined)
  await core.deleteNamespacedSecret({ name: secret, namespace: AGENT_NS }).catch(() => undefined)
  await deleteWithReplacements(core, node)
  uninstallChart()
  await admin()
    .leases.deleteNamespacedLease({ name: "nodemend-controller", namespace: CONTROLLER_NS })
    .catch(() => undefined)
  rmSync(host, { recursive: true, force: true })
}, 180_000)

describe("fault on a node's host -> agent pod -> condition -> in-cluster controller pod -> repair", () => {
  it("repairs the kwok node the agent found broken, and leaves the real node alone", async () => {
    const { core } = admin()
    appendKmsg("neuron: NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR nd-id=0 instance-id=i-0abc")
    const broken = await waitFor(
      "AcceleratedHardwareReady=False written by the agent pod",
      async () => {
        const c = condition(await core.readNode({ name: node }), "AcceleratedHardwareReady")
        return c?.status === "False" ? c : undefined
      },
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(broken.reason).toBe("NeuronSRAMUncorrectableError")
    // The controller taints, drains and terminates it: with the kwok provider the Node is deleted.
    await waitForRepairedAway(core, node)
    expect(await controllerEventReasons(core, node)).toContain("RepairStarted")
    // Capacity first: its replacement was up before the node was drained and removed.
    expect(await replacementsOf(core, node)).toHaveLength(1)
    const real = await core.readNode({ name: REAL_NODE })
    expect(real.spec?.taints ?? []).toEqual([])
    expect(condition(real, "Ready")?.status).toBe("True")
  })
})
