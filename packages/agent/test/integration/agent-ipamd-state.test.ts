/**
 * IPAMDInconsistentState through the real agent binary against the real API server, on a kwok Node:
 * the temp host root holds a VPC CNI node's traces (aws-node pod log dir, an `aws-k8s-agent` process,
 * IPAMD's ipam.json) and a gRPC double of containerd listening on <host-root>/run/containerd/containerd.sock.
 */
import { EventsV1Api } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeContainerd, sandbox, startFakeContainerd } from "../cri/fake-containerd.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { failWithAgentOutput } from "./agent-process.ts"
import { nodeEvents } from "./node-events.ts"

const BOOT = "6a1f0c2e-0000-4000-8000-0000000000c1"

describe("nodemend-agent: IPAMDInconsistentState from the CRI runtime", () => {
  const { kc, core } = clients()
  const events = kc.makeApiClient(EventsV1Api)
  let node: AgentNode
  let containerd: FakeContainerd

  beforeAll(async () => {
    node = await createAgentNode(core, BOOT)
    const host = node.host
    host.write("var/log/pods/kube-system_aws-node-k8s2x_7c1d/aws-vpc-cni-init/0.log", "")
    host.write("proc/4321/comm", "aws-k8s-agent\n")
    host.write(
      "var/run/aws-node/ipam.json",
      JSON.stringify({
        version: "vpc-cni-ipam/1",
        allocations: [
          {
            networkName: "aws-cni",
            containerID: "sb-web",
            ifName: "eth0",
            ipv4: "10.0.1.5",
            allocationTimestamp: 1764480000000000000,
            metadata: { k8sPodNamespace: "default", k8sPodName: "web-0" }
          },
          {
            networkName: "aws-cni",
            containerID: "sb-api",
            ifName: "eth0",
            ipv4: "10.0.1.6",
            allocationTimestamp: 1764480000000000000,
            metadata: { k8sPodNamespace: "prod", k8sPodName: "api-0" }
          },
          {
            networkName: "aws-cni",
            containerID: "sb-deleted",
            ifName: "eth0",
            ipv4: "10.0.1.7",
            allocationTimestamp: 1764480000000000000,
            metadata: { k8sPodNamespace: "default", k8sPodName: "gone-0" }
          }
        ]
      })
    )
    containerd = await startFakeContainerd(join(host.root, "run/containerd/containerd.sock"))
    containerd.sandboxes.set("sb-web", sandbox("sb-web", "default", "web-0", "10.0.1.5"))
    containerd.sandboxes.set("sb-api", sandbox("sb-api", "prod", "api-0", "10.0.1.99"))
  }, 240_000)

  afterAll(async () => {
    await node?.stop()
    await containerd?.close()
    await node?.close()
  })

  it("a pod whose sandbox IP differs from IPAMD's allocation becomes an Event on the Node; NetworkingReady stays True", async () => {
    const agent = node.start("checks:\n  ipamd-state: { intervalSeconds: 1 }\n")
    const list = () => nodeEvents(events, node.name)
    const ev = await waitFor(
      "IPAMDInconsistentState event",
      async () => (await list()).find((e) => e.reason === "IPAMDInconsistentState"),
      { timeoutMs: 30_000, intervalMs: 200 }
    ).catch(failWithAgentOutput(agent))
    expect(ev).toMatchObject({
      type: "Warning",
      note: "Internal IPAMD state has conflicting IP addresses for pod prod/api-0",
      reportingController: "nodemend.io/agent"
    })
    expect(ev.regarding).toMatchObject({ kind: "Node", name: node.name })
    // The runtime was asked over gRPC about every allocation; the unknown sandbox was not a fault and
    // the matching pod produced nothing.
    expect(containerd.requests).toEqual(expect.arrayContaining(["sb-web", "sb-api", "sb-deleted"]))
    const ours = (await list()).filter((e) => e.reason === "IPAMDInconsistentState")
    expect(ours.map((e) => e.note)).toEqual([
      "Internal IPAMD state has conflicting IP addresses for pod prod/api-0"
    ])
    // An Event-severity reason never turns the condition False.
    const networking = await waitFor(
      "NetworkingReady written",
      async () =>
        (await core.readNode({ name: node.name })).status?.conditions?.find(
          (c) => c.type === "NetworkingReady"
        ),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(networking.status).toBe("True")
  })
})
