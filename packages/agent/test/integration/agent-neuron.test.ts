/**
 * The agent binary on a Neuron node (issue #20): a host root laid out like a trn1.32xlarge (16 Trainium
 * devices bound to the Neuron driver in /proc/bus/pci/devices, /dev/neuron0..15), the Neuron driver's
 * `NEURON_HW_ERR=` kernel lines appended to /dev/kmsg -> AcceleratedHardwareReady on the API server.
 * Device ids: aws-neuron-driver neuron_device.h (AMZN_VENDOR_ID 0x1D0F, TRN1_DEVICE_ID0 0x7164) and the
 * driver's name `neuron-driver` (neuron_pci.c, struct pci_driver). Lines: test/fixtures/log-lines.ts.
 */
import { clients, waitFor } from "@nodemend/cluster-harness"
import { NEURON_READY } from "@nodemend/reason-codes"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BENIGN_LINES, FAULT_LINES } from "../fixtures/log-lines.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"

const BOOT = "3c9e51d2-0000-4000-8000-00000000ae0e"
const TRN1_DEVICES = 16
/** /proc/bus/pci/devices: bus/devfn, vendor+device, irq, 7 BARs, 7 sizes, driver (the format H100_PCI_DEVICES uses). */
const TRN1_PCI_DEVICES = Array.from(
  { length: TRN1_DEVICES },
  (_, i) =>
    `${(0x10 + i).toString(16).padStart(2, "0")}00\t1d0f7164\t0\t${Array.from({ length: 14 }, () => "0").join("\t")}\tneuron-driver\n`
).join("")

const neuronFaults = FAULT_LINES.filter((f) => f.reason.startsWith("Neuron") && f.source === "dmesg")
const neuronBenign = BENIGN_LINES.filter((b) => b.source === "dmesg" && /neuron/i.test(b.text))

describe("nodemend-agent on a Neuron node", () => {
  const { core } = clients()
  let node: AgentNode

  beforeAll(async () => {
    node = await createAgentNode(core, BOOT)
    node.host.write("proc/bus/pci/devices", TRN1_PCI_DEVICES)
    for (let i = 0; i < TRN1_DEVICES; i++) node.host.write(`dev/neuron${i}`, "")
    node.start("")
  }, 240_000)
  afterAll(async () => {
    await node?.close()
  })

  it("manages AcceleratedHardwareReady with the Neuron ready texts", async () => {
    const ready = await node.waitForCondition("AcceleratedHardwareReady", "True", { timeoutMs: 60_000 })
    expect(ready.reason).toBe(NEURON_READY.readyReason)
    expect(ready.message).toBe(NEURON_READY.readyMessage)
  })

  it("benign Neuron driver lines change nothing; each NEURON_HW_ERR code sets it False with its reason", async () => {
    expect(neuronFaults.map((f) => f.reason).sort()).toEqual([
      "NeuronDMAError",
      "NeuronHBMUncorrectableError",
      "NeuronNCUncorrectableError",
      "NeuronSRAMUncorrectableError"
    ])
    expect(neuronBenign.length).toBeGreaterThan(0)
    // The log readers start after the first condition write; a line appended before would be before their start.
    await waitFor(
      "the log monitors to start",
      async () => node.agent!.output().includes("log monitors") || undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 100
      }
    )
    for (const b of neuronBenign) node.host.appendKmsg(b.text)
    // A fault after the benign lines: the first False must name it, not a benign line.
    const [first, ...rest] = neuronFaults
    node.host.appendKmsg(first!.text)
    const bad = await node.waitForCondition("AcceleratedHardwareReady", "False")
    expect(bad.reason).toBe(first!.reason)
    expect(bad.message).toMatch(new RegExp(`^${first!.reason}: `))
    for (const f of rest) {
      node.host.appendKmsg(f.text)
      await node.waitForCondition("AcceleratedHardwareReady", "False", { reason: f.reason })
    }
    const all = await node.waitForCondition("AcceleratedHardwareReady", "False", {
      reason: rest.at(-1)!.reason
    })
    for (const f of neuronFaults) expect(all.message).toContain(`${f.reason}: `)
  })
})
