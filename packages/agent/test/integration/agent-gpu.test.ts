/**
 * The agent binary on a GPU node: the NVIDIA monitor as main.ts wires it. With NVML (the C test double,
 * 8 GPUs) AcceleratedHardwareReady is managed and an `NVRM: Xid` kernel line sets it False; with NVIDIA
 * devices but neither library, the condition stays absent and one NvidiaMonitorNotWatching Event says why.
 */
import { EventsV1Api, type V1Node } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { afterEach, describe, expect, it } from "vitest"
import { buildGpuDoubles } from "../../../dcgm-native/test/double/build.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { H100_PCI_DEVICES } from "./agent-process.ts"
import { nodeEvents } from "./node-events.ts"

describe("nodemend-agent with the NVIDIA monitor", () => {
  const { kc, core } = clients()
  const events = kc.makeApiClient(EventsV1Api)
  let node: AgentNode | undefined

  const cond = (n: V1Node) => n.status?.conditions?.find((c) => c.type === "AcceleratedHardwareReady")
  const setUp = async (config: string, env: Record<string, string> = {}) => {
    node = await createAgentNode(core, "5b0e9d1c-0000-4000-8000-00000000a1a1")
    node.host.write("proc/bus/pci/devices", H100_PCI_DEVICES)
    node.start(config, { env })
    return node
  }
  afterEach(async () => {
    await node?.close()
    node = undefined
  })

  it("NVML present: AcceleratedHardwareReady=True, then an XID 79 kernel line sets it False", async () => {
    const doubles = buildGpuDoubles()
    const { host, agent, waitForCondition } = await setUp(
      `monitors:\n  nvidia:\n    nvmlLibraryPath: ${doubles.nvml}\n    dcgmLibraryPath: /nonexistent/libdcgm.so.4\n`,
      { NMDOUBLE_NVML_DEVICES: "8" }
    )
    const ready = await waitForCondition("AcceleratedHardwareReady", "True", { timeoutMs: 60_000 })
    expect(ready.reason).toBe("NvidiaGPUIsReady")
    // The condition is written before the log readers start; a line appended earlier would be before their start.
    await waitFor(
      "the log monitors to start",
      async () => agent!.output().includes("log monitors") || undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 100
      }
    )
    host.appendKmsg("NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.")
    const bad = await waitForCondition("AcceleratedHardwareReady", "False")
    expect(bad.reason).toBe("NvidiaXID79Error")
  })

  it("NVIDIA devices but neither DCGM nor NVML: no condition, one NvidiaMonitorNotWatching Event", async () => {
    const { name, waitForCondition } = await setUp(
      "monitors:\n  nvidia:\n    nvmlLibraryPath: /nonexistent/libnvidia-ml.so.1\n    dcgmLibraryPath: /nonexistent/libdcgm.so.4\n"
    )
    const ev = await waitFor(
      "NvidiaMonitorNotWatching event",
      async () => (await nodeEvents(events, name)).find((e) => e.reason === "NvidiaMonitorNotWatching"),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(ev.note).toMatch(/^NVIDIA GPUs are not monitored: /)
    // The other conditions are written, AcceleratedHardwareReady never is (absent = not watching).
    await waitForCondition("KernelReady", "True")
    expect(cond(await core.readNode({ name }))).toBeUndefined()
  })
})
