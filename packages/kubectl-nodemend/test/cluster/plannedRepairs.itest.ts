// kubectl nodemend status / timeline show the repairs the controller planned for EC2 scheduled events (#42), read
// from its journal (ConfigMap nodemend-planned-repairs in its namespace, as the controller writes it) against the
// real API server: the event's code and id, NotBefore, when the repair starts, what holds it; never from the Node,
// which may claim a plan of its own in an annotation.
import { CoreV1Api } from "@kubernetes/client-node"
import { PLANNED_REPAIRS_CONFIGMAP, type PlanView, serializePlans } from "@nodemend/repair-controller"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  testKubeConfig,
  testKubeconfigPath,
  uniqueName
} from "../../../agent/test/diagnostics/cluster/kube.ts"
import { run } from "../../src/cli.ts"

const kc = testKubeConfig()
const core = kc.makeApiClient(CoreV1Api)
const ns = uniqueName("planned-controller")
const pool = uniqueName("planned")
const nodes = [uniqueName("planned-a"), uniqueName("planned-b"), uniqueName("planned-c")]
let kubeconfig: string
const HOUR = 3_600_000
const NOW = Date.now()
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

const plan = (node: string, over: Partial<PlanView> = {}): PlanView => ({
  node,
  eventId: `instance-event-${node.slice(-8)}`,
  code: "instance-retirement",
  reason: "EC2InstanceRetirementScheduled",
  action: "Replace",
  notBefore: NOW + 48 * HOUR,
  notAfter: NOW + 50 * HOUR,
  dueAt: NOW + 46 * HOUR,
  state: "waiting",
  text: "EC2 instance-retirement",
  at: NOW - 60_000,
  ...over
})

beforeAll(async () => {
  kubeconfig = testKubeconfigPath()
  await core.createNamespace({ body: { metadata: { name: ns } } })
  for (const name of nodes)
    await core.createNode({
      body: {
        metadata: {
          name,
          labels: { "karpenter.sh/nodepool": pool, type: "kwok" },
          // What a node could write about itself: not a plan.
          annotations: {
            "kwok.x-k8s.io/node": "fake",
            "nodemend.io/planned-repair": "instance-stop tomorrow"
          }
        },
        spec: { taints: [{ key: "kwok.x-k8s.io/node", value: "fake", effect: "NoSchedule" }] }
      }
    })
})
afterAll(async () => {
  for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined)
  await core.deleteNamespace({ name: ns }).catch(() => undefined)
})

const cli = async (...argv: string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await run([...argv, "--kubeconfig", kubeconfig, "--controller-namespace", ns], {
    out: (t) => out.push(t),
    err: (t) => err.push(t)
  })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

describe("kubectl nodemend: planned repairs from the controller's journal", () => {
  it("status says none while the controller has planned nothing", async () => {
    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.code, status.err).toBe(0)
    expect(status.out).toContain("No repair is planned for a scheduled event.")
  })

  it("status lists each plan: event, NotBefore, when it starts, what holds it; timeline shows the node's", async () => {
    const waiting = plan(nodes[0]!)
    const held = plan(nodes[1]!, {
      code: "system-reboot",
      reason: "EC2SystemRebootScheduled",
      action: "Reboot",
      dueAt: NOW - 5 * 60_000,
      notBefore: NOW + HOUR,
      state: "held",
      heldBy: 'budget: 1 in flight, allowed 1 by maxInFlight "1"; starts when a slot frees'
    })
    // A plan of a node outside the selector is not listed.
    const other = plan("somewhere-else")
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: PLANNED_REPAIRS_CONFIGMAP },
        data: { plans: serializePlans([waiting, held, other]) }
      }
    })
    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.code, status.err).toBe(0)
    const lines = status.out.split("\n")
    const header = lines.findIndex((l) => l.startsWith("NODE   ") && l.includes("NOT BEFORE"))
    expect(header).toBeGreaterThan(0)
    // Soonest due first: the held reboot, then the retirement.
    expect(lines[header + 1]).toMatch(
      new RegExp(
        `^${nodes[1]} +${held.eventId} +system-reboot +${iso(held.notBefore)} +${iso(held.dueAt)} +Reboot +held: budget: 1 in flight`
      )
    )
    expect(lines[header + 2]).toMatch(
      new RegExp(
        `^${nodes[0]} +${waiting.eventId} +instance-retirement +${iso(waiting.notBefore)} +${iso(waiting.dueAt)} +Replace +waiting until ${iso(waiting.dueAt)}`
      )
    )
    expect(status.out).not.toContain("somewhere-else")
    expect(status.out).not.toContain(nodes[2]! + "   instance")

    const tl = await cli("timeline", nodes[1]!)
    expect(tl.code, tl.err).toBe(0)
    const row = tl.out.split("\n").find((l) => l.includes(" Plan ")) ?? ""
    expect(row).toContain("controller journal")
    expect(row).toContain(
      `Reboot planned for system-reboot ${held.eventId}: EC2 acts from ${iso(held.notBefore)}`
    )
    expect(row).toContain("held: budget")
    const none = await cli("timeline", nodes[2]!)
    expect(none.out).not.toContain(" Plan ")
  })

  it("an unreadable journal is said, not taken for no plans", async () => {
    await core.replaceNamespacedConfigMap({
      name: PLANNED_REPAIRS_CONFIGMAP,
      namespace: ns,
      body: { metadata: { name: PLANNED_REPAIRS_CONFIGMAP }, data: { plans: "{not json" } }
    })
    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.code, status.err).toBe(0)
    expect(status.out).toContain("Planned repairs: the controller's journal cannot be read")
    expect(status.out).not.toContain("No repair is planned")
  })
})
