// reason-codes 2.0.0: NVIDIA's XID catalog chooses the XIDs' default actions. The controller's policy matching
// (decide/policyMatch.ts) gives them, and the migration note's YAML (docs/reason-codes.md) restores 1.x's.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { parse as parseYaml } from "yaml"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../src/config/ControllerConfig.ts"
import { matchPolicies } from "../src/decide/policyMatch.ts"
import { cond, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const config = (raw: unknown = {}): ControllerConfig => Result.getOrThrow(decodeConfig(raw))

/** The AcceleratedHardwareReady match of a node whose condition carries `reason`. */
const gpuMatch = (c: ControllerConfig, reason: string, status = "False") => {
  const [m] = matchPolicies(c, node("g", [cond("AcceleratedHardwareReady", status, T0, reason)]))
  return m === undefined ? undefined : { action: m.action, source: m.actionSource }
}

/** The YAML blocks of the "Migrating from 1.x to 2.0.0" section of docs/reason-codes.md. */
const migrationYaml = (): readonly unknown[] => {
  const doc = readFileSync(new URL("../../../docs/reason-codes.md", import.meta.url), "utf8")
  const section = doc.slice(doc.indexOf("## Migrating from 1.x to 2.0.0"))
  const end = section.indexOf("\n## ", 1)
  return [...section.slice(0, end).matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parseYaml(m[1]!))
}

describe("default actions from NVIDIA's XID catalog (reason-codes 2.0.0)", () => {
  it("XIDs 74, 79, 119, 120 and 140 reboot; 54 and 142 replace; all from the catalog", () => {
    const c = config()
    for (const xid of [74, 79, 119, 120, 140, 48, 95])
      expect(gpuMatch(c, `NvidiaXID${xid}Error`), `XID ${xid}`).toEqual({
        action: "Reboot",
        source: "catalog"
      })
    for (const xid of [54, 142])
      expect(gpuMatch(c, `NvidiaXID${xid}Error`), `XID ${xid}`).toEqual({
        action: "Replace",
        source: "catalog"
      })
    expect(gpuMatch(c, "NvidiaNVLinkGPUResetRequired")).toEqual({ action: "Reboot", source: "catalog" })
  })

  it("XID 63 is an Event now: a promoted NvidiaXID63Warning condition does nothing by default", () => {
    expect(gpuMatch(config(), "NvidiaXID63Warning")).toEqual({ action: "None", source: "catalog" })
  })

  it("the migration note's YAML keeps 1.x's actions, through the per-reason override", () => {
    const [controller, agent] = migrationYaml()
    expect(agent).toEqual({
      monitors: { nvidia: { reasons: { NvidiaXID63Warning: { severity: "Condition" } } } }
    })
    const c = config(controller)
    for (const xid of [74, 79, 119, 120, 140])
      expect(gpuMatch(c, `NvidiaXID${xid}Error`), `XID ${xid}`).toEqual({
        action: "Replace",
        source: "reason-override"
      })
    expect(gpuMatch(c, "NvidiaXID63Warning")).toEqual({ action: "Reboot", source: "reason-override" })
    // what the note does not name keeps the catalog's action
    expect(gpuMatch(c, "NvidiaXID48Error")).toEqual({ action: "Reboot", source: "catalog" })
  })
})
