/**
 * What we ship: the bundle (dist/nodemend-agent.mjs, built here by the package's build step) run with the
 * deployed V8 flags against the real API server. A fault line in kmsg becomes a condition; the bundle
 * holds no @kubernetes/client-node and the process never mapped koffi (no NVIDIA hardware or library on
 * the test host).
 */
import { clients } from "@nodemend/cluster-harness"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildGpuDoubles } from "../../../dcgm-native/test/double/build.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { BUNDLE, buildBundle, H100_PCI_DEVICES } from "./agent-process.ts"

describe("the bundled agent (dist/nodemend-agent.mjs)", () => {
  const { core } = clients()
  let node: AgentNode | undefined

  beforeAll(async () => {
    buildBundle()
    node = await createAgentNode(core, "5b0d1e00-0000-4000-8000-00000000b0d1")
    node.start("monitors:\n  kernel:\n    reasons:\n      SoftLockup: { severity: Condition }\n", {
      bundle: true
    })
  }, 300_000)
  afterAll(async () => {
    await node?.close()
  })

  it("turns a kmsg fault line into KernelReady=False and loads neither client-node nor koffi", async () => {
    const { host, agent, waitForCondition } = node!
    await waitForCondition("KernelReady", "True", { timeoutMs: 60_000 })
    host.appendKmsg("watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [kworker/3:1:123]")
    const condition = await waitForCondition("KernelReady", "False", { reason: "SoftLockup" })
    expect(condition.message).toContain("stuck for 22s")
    const maps = readFileSync(`/proc/${agent!.child.pid}/maps`, "utf8")
    expect(maps).not.toMatch(/koffi/)
    // client-node's generated API classes (the agent's own client has none).
    expect(readFileSync(BUNDLE, "utf8")).not.toMatch(/CustomObjectsApi|CoreV1Api/)
  })
})

describe("the bundled agent on a GPU node", () => {
  const { core } = clients()
  let node: AgentNode | undefined
  afterAll(async () => {
    await node?.close()
  })

  let config = ""
  beforeAll(async () => {
    buildBundle()
    const doubles = buildGpuDoubles()
    node = await createAgentNode(core, "5b0d1e00-0000-4000-8000-00000000b0d2")
    node.host.write("proc/bus/pci/devices", H100_PCI_DEVICES)
    config = `monitors:\n  nvidia:\n    nvmlLibraryPath: ${doubles.nvml}\n    dcgmLibraryPath: /nonexistent/libdcgm.so.4\n`
  }, 300_000)

  it("loads koffi from outside the bundle when NVIDIA devices are present, and NVML drives AcceleratedHardwareReady", async () => {
    const agent = node!.start(config, { env: { NMDOUBLE_NVML_DEVICES: "8" }, bundle: true })
    const ready = await node!.waitForCondition("AcceleratedHardwareReady", "True", { timeoutMs: 60_000 })
    expect(ready.reason).toBe("NvidiaGPUIsReady")
    expect(readFileSync(`/proc/${agent.child.pid}/maps`, "utf8")).toMatch(/koffi/)
  })
})
