// Every injectable fault, written into a simulated host and read back as the agent's sources deliver it, is
// classified by the agent's own rule engine as the condition and reason `inject --list` promises.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { violationDetection } from "../../agent/src/monitors/nvidia/violation-findings.ts"
import { makeLogRuleEngine } from "../../agent/src/rules/engine.ts"
import { resolveReason } from "../../reason-codes/src/index.ts"
import { decodePolicyResponse } from "../../dcgm-native/src/policy-violation.ts"
import { encodePolicyResponse } from "../../dcgm-native/test/double/control.ts"
import { describeOutcome, FAULTS, writeFault } from "../src/faults.mjs"
import { makeHost } from "../src/host.mjs"

const root = makeHost(
  mkdtempSync(join(tmpdir(), "nodemend-demo-host-")),
  "0f5a3c1e-8d2b-4c7a-9e61-3b2d4f5a6c7d"
)
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** What the source hands the rules: kmsg record text, the journal MESSAGE, or a log file line. */
const recordsOf = (fault, before) => {
  const w = fault.where
  if (w.source === "kmsg")
    return readFileSync(join(root, "dev/kmsg"), "utf8")
      .split("\n")
      .slice(before.kmsg)
      .filter(Boolean)
      .map((r) => ({ source: "dmesg", text: r.slice(r.indexOf(";") + 1) }))
  if (w.source === "file")
    return readFileSync(join(root, w.path), "utf8")
      .split("\n")
      .slice(before.file)
      .filter(Boolean)
      .map((text) => ({ source: `file:/${w.path}`, text }))
  return fault.lines().map((text) => ({ source: `journal:${w.identifier}`, text }))
}

describe("inject catalog", () => {
  for (const fault of FAULTS.filter((f) => f.where.source !== "dcgm")) {
    it(`${fault.name} -> ${fault.conditionType} ${fault.reason}`, () => {
      const count = (rel) => readFileSync(join(root, rel), "utf8").split("\n").filter(Boolean).length
      const before = {
        kmsg: count("dev/kmsg"),
        file: fault.where.source === "file" ? count(fault.where.path) : 0
      }
      if (fault.where.source !== "journal") writeFault(root, fault)
      const engine = makeLogRuleEngine()
      const findings = recordsOf(fault, before).flatMap((r) =>
        engine.process({ ...r, timestampMs: Date.now() })
      )
      expect(findings.map((f) => [f._tag, f.conditionType, f.reason])).toContainEqual([
        fault.clears ? "Resolution" : "Detection",
        fault.conditionType,
        fault.reason
      ])
      if (!fault.clears) expect(findings.find((f) => f._tag === "Detection")?.severity).toBe("Condition")
    })
  }
})

// A DCGM fault is the vendor struct the double hands the agent's callback: decoded by the agent's decoder and
// turned into a finding by the agent's own violation findings, it is the reason and severity inject promises.
describe("inject catalog: DCGM policy violations", () => {
  const dcgm = FAULTS.filter((f) => f.where.source === "dcgm")
  it("has one fault per dcgmPolicyCondition_t bit", () => {
    expect(dcgm.map((f) => f.fire.condition).sort()).toEqual(
      ["DBE", "MPR", "NVLINK", "PCI", "POWER", "THERMAL", "XID"].sort()
    )
  })
  for (const fault of dcgm) {
    it(`${fault.name} -> ${describeOutcome(fault)}`, () => {
      const v = decodePolicyResponse(encodePolicyResponse(fault.fire, Date.now() * 1000))
      if (v._tag === "Undecodable") throw new Error(v.detail)
      const d = violationDetection(v, "0000:53:00.0")
      expect([d.conditionType, d.reason]).toEqual([fault.conditionType, fault.reason])
      expect(resolveReason(d.reason)?.entry.severity).toBe(fault.event ? "Event" : "Condition")
    })
  }
  it("a host without a DCGM double refuses the write, and says why", () => {
    expect(() => writeFault(root, dcgm[0])).toThrow(/no DCGM test double was started for this host/)
  })
})
