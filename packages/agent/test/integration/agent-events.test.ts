/**
 * Event budgets are per monitor (issue #8: "a token budget per monitor so one noisy monitor cannot starve
 * the others"): the kernel monitor spends its budget and stays throttled while the storage monitor's Event
 * still gets through. Within a monitor's ceiling each reason has a bucket of half of it, and a reason's first
 * occurrence is written even over a spent ceiling (issue #27; the storms are in agent-event-storms.test.ts).
 * Also: what the agent logs is JSON, one object per line.
 */
import { EventsV1Api } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { resolveReason } from "@nodemend/reason-codes"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { nodeEvents } from "./node-events.ts"

const BOOT = "6a1f0c2e-0000-4000-8000-00000000e7e7"
const KERNEL_BURST = 4
/** Of the kernel monitor's ceiling, each reason's own bucket. */
const REASON_BURST = KERNEL_BURST / 2
/** The kernel monitor may create four Events, then one an hour; the others keep the default budget. */
const CONFIG = `
monitors:
  kernel:
    events: { burst: ${KERNEL_BURST}, refillSeconds: 3600 }
`

describe("nodemend-agent: Event budgets per monitor", () => {
  const { kc, core } = clients()
  const events = kc.makeApiClient(EventsV1Api)
  let node: AgentNode

  beforeAll(async () => {
    node = await createAgentNode(core, BOOT)
    node.start(CONFIG)
    await node.waitForCondition("StorageReady", "True")
    // The log sources open before any condition is written (issue #26: they used to open after it, and under load
    // the faults appended below were read as history: no Event, nothing logged).
    expect(node.agent?.output()).toContain("log monitors")
  }, 240_000)
  afterAll(async () => {
    await node?.close()
  })

  it("a kernel monitor over its budget is throttled; a new kernel reason and the storage monitor's Event still get through", async () => {
    // Five distinct soft lockups (distinct messages, so no series aggregation): SoftLockup Events beyond its
    // reason's bucket (half the kernel ceiling) are refused. Then five hung tasks: AppBlocked takes what is left
    // of the ceiling. Then a conntrack table full: its first occurrence is written over the spent ceiling.
    for (let s = 21; s <= 25; s++)
      node.host.appendKmsg(`watchdog: BUG: soft lockup - CPU#${s - 20} stuck for ${s}s! [kworker/${s}:1:99]`)
    for (let s = 1; s <= 5; s++)
      node.host.appendKmsg(`INFO: task jbd2/nvme${s}n1-8:${400 + s} blocked for more than 120 seconds.`)
    node.host.appendKmsg("nf_conntrack: table full, dropping packet")
    // Then a storage fault: a shared budget would have been spent by the kernel monitor by now.
    node.host.appendKmsg(
      "I/O error, dev nvme0n1, sector 131209936 op 0x0:(READ) flags 0x80700 phys_seg 25 prio class 0"
    )
    const io = await waitFor(
      "BlockDeviceIOError event",
      async () => (await nodeEvents(events, node.name)).find((e) => e.reason === "BlockDeviceIOError"),
      { timeoutMs: 30_000, intervalMs: 200 }
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nagent output:\n${node.agent?.output().slice(-4000)}`)
    })
    expect(io.note).toBe(
      "I/O error detected on block device nvme0n1 at sector 131209936, indicating a failed physical drive or EBS volume"
    )
    // The recorder handles detections in order, so every kernel finding was decided before the storage Event.
    const all = await nodeEvents(events, node.name)
    const kernel = all.filter((e) => resolveReason(e.reason ?? "")?.entry.monitor === "kernel")
    expect(all.filter((e) => e.reason === "SoftLockup")).toHaveLength(REASON_BURST)
    expect(all.filter((e) => e.reason === "AppBlocked")).toHaveLength(KERNEL_BURST - REASON_BURST)
    expect(all.filter((e) => e.reason === "ConntrackExceededKernel")).toHaveLength(1)
    expect(kernel).toHaveLength(KERNEL_BURST + 1)
  })

  it("logs JSON, one object per line, with a message and a level", () => {
    const lines = node
      .agent!.output()
      .split("\n")
      .filter((l) => l.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      let parsed: unknown
      expect(() => {
        parsed = JSON.parse(line)
      }, line).not.toThrow()
      expect(parsed, line).toMatchObject({ message: expect.anything(), level: expect.any(String) })
    }
  })
})
