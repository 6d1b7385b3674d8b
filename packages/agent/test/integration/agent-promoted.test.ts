/**
 * An Event reason promoted to a Condition by config recovers (issue #20): the agent binary with AppCrash
 * promoted (quietSeconds 3), a segfault report in /dev/kmsg -> KernelReady=False/AppCrash on the API
 * server, then True again once the quiet period passes without another crash. Before, it stayed False
 * until a repair. The quiet period's arithmetic is tested on the TestClock in test/recovery.
 */
import { clients, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FAULT_LINES } from "../fixtures/log-lines.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"

const BOOT = "8d41a7c3-0000-4000-8000-0000000a9c05"
const QUIET_SECONDS = 3
const crash = FAULT_LINES.find((f) => f.reason === "AppCrash" && f.source === "dmesg")!

describe("nodemend-agent: a promoted Event reason clears after its quiet period", () => {
  const { core } = clients()
  let node: AgentNode

  beforeAll(async () => {
    node = await createAgentNode(core, BOOT)
    node.start(
      `monitors:\n  kernel:\n    reasons:\n      AppCrash: { severity: Condition, quietSeconds: ${QUIET_SECONDS} }\n`
    )
    await node.waitForCondition("KernelReady", "True")
    await waitFor(
      "the log monitors to start",
      async () => node.agent!.output().includes("log monitors") || undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 100
      }
    )
  }, 240_000)
  afterAll(async () => {
    await node?.close()
  })

  it("KernelReady False with AppCrash, True again after quietSeconds without a crash", async () => {
    node.host.appendKmsg(crash.text)
    const bad = await node.waitForCondition("KernelReady", "False", { reason: "AppCrash" })
    const good = await node.waitForCondition("KernelReady", "True", { timeoutMs: 30_000 })
    expect(good.reason).toBe("KernelIsReady")
    // (when it clears is the TestClock test's; under this machine's load the two writes' delays vary)
    expect(new Date(good.lastTransitionTime!).getTime()).toBeGreaterThan(
      new Date(bad.lastTransitionTime!).getTime()
    )
  })
})
