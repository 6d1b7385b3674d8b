/**
 * The agent binary against the real API server of the local cluster, on a kwok Node, with a temporary
 * host root. One Node and one sequence: each step builds on the state the previous one left.
 */
import { EventsV1Api, type V1Node, type V1NodeCondition } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { JOURNAL_REMOTE } from "./agent-process.ts"
import { nodeEvents } from "./node-events.ts"

const BOOT_1 = "6a1f0c2e-0000-4000-8000-000000000001"
const BOOT_2 = "6a1f0c2e-0000-4000-8000-000000000002"
/** Fast checks, and open-file exhaustion promoted to a Condition so a periodic check can latch KernelReady. */
const BASE_CONFIG = `
checks:
  ipamd: { intervalSeconds: 1 }
  open-files: { intervalSeconds: 1 }
monitors:
  kernel:
    reasons:
      ApproachingMaxOpenFiles: { severity: Condition }
`
const OURS = ["KernelReady", "ContainerRuntimeReady", "NetworkingReady", "StorageReady"]

describe("nodemend-agent against a real API server", () => {
  const { kc, core } = clients()
  const events = kc.makeApiClient(EventsV1Api)
  let node: AgentNode

  const cond = (n: V1Node, type: string): V1NodeCondition | undefined =>
    n.status?.conditions?.find((c) => c.type === type)
  const readNode = () => core.readNode({ name: node.name })
  const start = (config = BASE_CONFIG) => node.start(config)
  const kubeletReadyUntouched = async () => {
    const ready = cond(await readNode(), "Ready")
    expect(ready).toMatchObject({ status: "True", reason: "KubeletReady" })
  }
  beforeAll(async () => {
    node = await createAgentNode(core, BOOT_1)
  }, 240_000)
  afterAll(async () => {
    await node?.close()
  })

  it("writes its four conditions True and leaves kubelet's alone", async () => {
    start()
    for (const type of OURS) await node.waitForCondition(type, "True")
    expect(cond(await readNode(), "AcceleratedHardwareReady")).toBeUndefined()
    await kubeletReadyUntouched()
  })

  it("a soft lockup in kmsg becomes a SoftLockup Event on the Node", async () => {
    node.host.appendKmsg("watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]")
    const ev = await waitFor(
      "SoftLockup event",
      async () => (await nodeEvents(events, node.name)).find((e) => e.reason === "SoftLockup"),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(ev).toMatchObject({
      type: "Warning",
      note: "CPU stuck for 23s",
      reportingController: "nodemend.io/agent"
    })
    expect(ev.regarding).toMatchObject({ kind: "Node", name: node.name })
  })

  it("a repeat of the same fault raises the Event's series count instead of creating another", async () => {
    node.host.appendKmsg("watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]")
    const ev = await waitFor(
      "SoftLockup series",
      async () =>
        (await nodeEvents(events, node.name)).find(
          (e) => e.reason === "SoftLockup" && (e.series?.count ?? 0) >= 2
        ),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(ev.series?.count).toBe(2)
    const all = await nodeEvents(events, node.name)
    expect(all.filter((e) => e.reason === "SoftLockup")).toHaveLength(1)
  })

  it.skipIf(JOURNAL_REMOTE === undefined)(
    "a fork failure in the kubelet journal sets KernelReady=False/ForkFailedOutOfPIDs",
    async () => {
      node.host.writeJournal(
        "kubelet",
        'E1130 05:00:00.000000 1234 kuberuntime_manager.go:1] "Failed" err="fork/exec /usr/bin/runc: resource temporarily unavailable"'
      )
      const c = await node.waitForCondition("KernelReady", "False", { reason: "ForkFailedOutOfPIDs" })
      expect(c.message).toContain(`[boot-id=${BOOT_1}]`)
      await kubeletReadyUntouched()
    }
  )

  it("IPAMD missing on a VPC CNI node sets NetworkingReady=False; the process coming back restores True", async () => {
    node.host.write("var/log/pods/kube-system_aws-node-abcde_0f0f/aws-vpc-cni-init/0.log", "")
    const down = await node.waitForCondition("NetworkingReady", "False", { reason: "IPAMDNotRunning" })
    expect(down.message).toContain("IPAMD was not found running")
    node.host.write("proc/4321/comm", "aws-k8s-agent\n")
    const up = await node.waitForCondition("NetworkingReady", "True", { reason: "NetworkingIsReady" })
    expect(up.message).toBe("Monitoring for the Networking system is active")
    // Restored by a transition of its own, not left over from before the fault.
    expect(new Date(String(up.lastTransitionTime)).getTime()).toBeGreaterThanOrEqual(
      new Date(String(down.lastTransitionTime)).getTime()
    )
    await kubeletReadyUntouched()
  })

  it("a severity override turns a periodic finding into a condition", async () => {
    node.host.write("proc/sys/fs/file-nr", "9000\t0\t10000\n")
    try {
      const c = await node.waitForCondition("KernelReady", "False", { reason: "ApproachingMaxOpenFiles" })
      expect(c.message).toContain(
        "ApproachingMaxOpenFiles: Approaching Exhaustion of max open file descriptors. 9000 of 10000"
      )
    } finally {
      // The fault goes away, but nothing reports it resolved: the condition stays as it is.
      node.host.write("proc/sys/fs/file-nr", "100\t0\t10000\n")
    }
  })

  it("an agent restart on the same boot keeps KernelReady False with its transition time", async () => {
    await node.waitForCondition("KernelReady", "False")
    await new Promise((r) => setTimeout(r, 1500)) // let the last open-files run land
    const kept = cond(await readNode(), "KernelReady")!
    await node.stop()
    start()
    await waitFor(
      "agent ready again",
      async () => (node.agent!.output().includes("periodic checks") ? true : undefined),
      {
        timeoutMs: 30_000
      }
    )
    // Give it time to (wrongly) rewrite the condition, then check it did not.
    await new Promise((r) => setTimeout(r, 2000))
    const after = cond(await readNode(), "KernelReady")!
    expect(after.status).toBe("False")
    expect(after.reason).toBe(kept.reason)
    expect(after.message).toBe(kept.message)
    expect(after.lastTransitionTime).toEqual(kept.lastTransitionTime)
  })

  it("a new boot id returns KernelReady to True", async () => {
    // The earlier tests left it False on the first boot.
    const before = cond(await readNode(), "KernelReady")!
    expect(before.status).toBe("False")
    await node.stop()
    node.host.setBootId(BOOT_2)
    start()
    const after = await node.waitForCondition("KernelReady", "True", { reason: "KernelIsReady" })
    expect(after.message).toBe("Monitoring for the Kernel system is active")
    expect(new Date(String(after.lastTransitionTime)).getTime()).toBeGreaterThanOrEqual(
      new Date(String(before.lastTransitionTime)).getTime()
    )
    await kubeletReadyUntouched()
  })

  it("a disabled monitor's condition disappears; the others stay", async () => {
    await node.stop()
    start("monitors:\n  networking: { enabled: false }\n")
    await waitFor(
      "NetworkingReady gone",
      async () => (cond(await readNode(), "NetworkingReady") === undefined ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 100
      }
    )
    const n = await readNode()
    for (const type of ["KernelReady", "ContainerRuntimeReady", "StorageReady"])
      expect(cond(n, type)?.status).toBe("True")
    await kubeletReadyUntouched()
  })

  it("an invalid config exits non-zero naming the field", async () => {
    await node.stop()
    const bad = start("monitors:\n  kernel: { enabeld: true }\n")
    const code = await bad.exited
    expect(code).toBe(2)
    expect(bad.output()).toContain("monitors.kernel.enabeld")
    await node.stop()
  })
})
