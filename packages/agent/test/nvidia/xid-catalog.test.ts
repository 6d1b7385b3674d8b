// NVIDIA's XID catalog as data: every row cited, the bucket -> action mapping per GPU generation, the locked
// fatal-XID actions derived from it, and the recovery action (XID 154) as findings.
import { CATALOG, FATAL_XIDS, resolveReason, xidReason } from "@nodemend/reason-codes"
import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigText } from "../../src/config/load.ts"
import { applyOverrides } from "../../src/config/overrides.ts"
import { xidDetection } from "../../src/monitors/nvidia/findings.ts"
import { recoveryActionFindings } from "../../src/monitors/nvidia/recovery-action.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"
import { GPU_GENERATIONS, XID_CATALOG, XID_CATALOG_SOURCE } from "../../src/monitors/nvidia/xid-catalog.ts"
import {
  BUCKET_ACTIONS,
  catalogAction,
  catalogDefaultAction,
  defaultActionOfEntry
} from "../../src/monitors/nvidia/xid-catalog-actions.ts"

describe("XID catalog data", () => {
  it("names its source, retrieval date and revision, and every row cites it", () => {
    expect(XID_CATALOG_SOURCE.url).toMatch(/^https:\/\/docs\.nvidia\.com\/deploy\/xid-errors\//)
    expect(XID_CATALOG_SOURCE.retrieved).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(XID_CATALOG_SOURCE.revision).toBeGreaterThan(0)
    const xids = XID_CATALOG.map((e) => e.xid)
    expect(new Set(xids).size).toBe(xids.length)
    for (const e of XID_CATALOG) {
      expect(e.cite).toBe(`${XID_CATALOG_SOURCE.url} Table 1, Code ${e.xid}`)
      expect(e.mnemonic).toMatch(/^[A-Z0-9_ /]+$/)
      expect(e.immediate.length).toBeGreaterThan(0)
      expect(Object.keys(e.appliesTo)).toEqual([...GPU_GENERATIONS])
    }
  })

  it("carries every fatal XID and the Blackwell NVLink family 144-150 with 154, 155", () => {
    for (const xid of [...Object.keys(FATAL_XIDS).map(Number), 144, 145, 146, 147, 148, 149, 150, 154, 155])
      expect(
        XID_CATALOG.some((e) => e.xid === xid),
        `XID ${xid}`
      ).toBe(true)
  })
})

describe("catalog action per generation", () => {
  it("maps buckets as documented, generation by generation", () => {
    expect(catalogAction(79, "H100")).toEqual({ _tag: "Repair", action: "Reboot" }) // RESTART_BM
    expect(catalogAction(46, "GB200")).toEqual({ _tag: "Repair", action: "Reboot" }) // RESET_GPU
    expect(catalogAction(54, "A100")).toEqual({ _tag: "Repair", action: "Replace" }) // CHECK_MECHANICALS
    expect(catalogAction(54, "GB200")).toEqual({ _tag: "NotApplicable" })
    expect(catalogAction(142, "GB200")).toEqual({ _tag: "Repair", action: "Replace" }) // CONTACT_SUPPORT
    expect(catalogAction(142, "H100")).toEqual({ _tag: "NotApplicable" })
    expect(catalogAction(136, "H100")).toEqual({ _tag: "Repair", action: "Reboot" })
    expect(catalogAction(136, "B100")).toEqual({ _tag: "NotApplicable" })
    expect(catalogAction(13, "A100")).toEqual({ _tag: "Repair", action: "None" }) // RESTART_APP
    expect(catalogAction(74, "H100")).toEqual({ _tag: "Repair", action: "Reboot" }) // WORKFLOW_NVLINK_ERR
    expect(catalogAction(74, "GB200")).toEqual({ _tag: "NotApplicable" })
    expect(catalogAction(159, "GB200")).toEqual({ _tag: "Undetermined", bucket: "CHECK_UVM" })
    expect(catalogAction(999, "H100")).toEqual({ _tag: "NotCatalogued" })
  })

  it("the NVLink5 family and XID 154 follow the driver's recovery action on Blackwell only", () => {
    for (let xid = 144; xid <= 150; xid++) {
      expect(catalogAction(xid, "B100")).toEqual({ _tag: "FollowRecoveryAction" })
      expect(catalogAction(xid, "GB200")).toEqual({ _tag: "FollowRecoveryAction" })
      expect(catalogAction(xid, "A100")).toEqual({ _tag: "NotApplicable" })
      expect(catalogAction(xid, "H100")).toEqual({ _tag: "NotApplicable" })
    }
    for (const g of GPU_GENERATIONS) expect(catalogAction(154, g)).toEqual({ _tag: "FollowRecoveryAction" })
  })

  it("the fatal XIDs and their actions are the catalog's: strongest node action over the generations", () => {
    // Derived from the rows: a changed row (bucket or "Applies to") changes what this expects of reason-codes.
    const derived = Object.fromEntries(
      XID_CATALOG.map((e) => [e.xid, defaultActionOfEntry(e)] as const).filter(([, a]) => a !== "None")
    )
    expect(FATAL_XIDS).toEqual(derived)
    for (const e of XID_CATALOG) {
      const reason = xidReason(e.xid)
      expect(resolveReason(reason)!.defaultAction, `${reason} (${e.immediate})`).toBe(defaultActionOfEntry(e))
    }
  })

  it("the XIDs whose action 2.0.0 changed, from their rows", () => {
    expect([63, 74, 79, 119, 120, 140].map(catalogDefaultAction)).toEqual([
      "None", // IGNORE: NvidiaXID63Warning
      "Reboot", // WORKFLOW_NVLINK_ERR
      "Reboot", // RESTART_BM
      "Reboot", // RESET_GPU
      "Reboot",
      "Reboot"
    ])
    expect(xidReason(63)).toBe("NvidiaXID63Warning")
    expect([54, 142].map(catalogDefaultAction)).toEqual(["Replace", "Replace"])
    expect(catalogDefaultAction(999)).toBe(undefined)
  })

  it("one default per reason: the strongest action of the generations the XID applies to", () => {
    const row = XID_CATALOG.find((e) => e.xid === 54)!
    expect(defaultActionOfEntry(row)).toBe("Replace")
    expect(defaultActionOfEntry({ ...row, immediate: "RESET_GPU" })).toBe("Reboot")
    expect(defaultActionOfEntry({ ...row, immediate: "RESTART_APP" })).toBe("None")
    // a bucket no generation applies to chooses nothing
    const nowhere = { A100: false, H100: false, B100: false, GB200: false }
    expect(defaultActionOfEntry({ ...row, appliesTo: nowhere })).toBe("None")
    // buckets that defer to the driver or cannot be known here are no node action for the XID itself
    for (const bucket of ["XID_154", "WORKFLOW_NVLINK5_ERR", "CHECK_UVM", "SOMETHING_NEW"])
      expect(defaultActionOfEntry({ ...row, immediate: bucket }), bucket).toBe("None")
  })

  it("maps only to actions the catalog of reason codes knows", () => {
    for (const a of Object.values(BUCKET_ACTIONS))
      expect(["None", "Reboot", "Replace", "FollowRecoveryAction"]).toContain(a)
  })
})

describe("migrating from reason-codes 1.x", () => {
  it("the migration note's agent YAML keeps XID 63 a Condition, through the real config path", () => {
    const doc = readFileSync(new URL("../../../../docs/reason-codes.md", import.meta.url), "utf8")
    const section = doc.slice(doc.indexOf("## Migrating from 1.x to 2.0.0"))
    const agentYaml = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .find((y) => y.startsWith("monitors:"))!
    const config = Result.getOrThrow(parseConfigText(agentYaml, "migration.yaml"))
    const xid63 = xidDetection(63, 1000, "0000:2a:00")
    expect([xid63.reason, xid63.severity]).toEqual(["NvidiaXID63Warning", "Event"])
    expect(applyOverrides(config, xid63)).toMatchObject({
      reason: "NvidiaXID63Warning",
      severity: "Condition"
    })
    // without it, 2.0.0's Event
    const plain = Result.getOrThrow(parseConfigText("", "empty.yaml"))
    expect(applyOverrides(plain, xid63)?.severity).toBe("Event")
  })
})

describe("recovery action (XID 154 + NVML field 230)", () => {
  const reasonOf = (v: number) => {
    const fs = recoveryActionFindings(v, 1000, "0000:2a:00")
    recordProduced(fs)
    return fs.map((f) => f.reason)
  }

  it("maps each nvmlDeviceGpuRecoveryAction_t value to its reason and default action", () => {
    expect(reasonOf(0)).toEqual([])
    expect(reasonOf(1)).toEqual(["NvidiaGPUResetRequired"])
    expect(reasonOf(2)).toEqual(["NvidiaNodeRebootRequired"])
    expect(reasonOf(3)).toEqual(["NvidiaGPUDrainP2PRequired"])
    expect(reasonOf(4)).toEqual(["NvidiaGPUDrainAndResetRequired"])
    expect(reasonOf(5)).toEqual(["NvidiaGPURecoveryActionOther"])
    expect(reasonOf(77)).toEqual(["NvidiaGPURecoveryActionOther"])
    const action = (v: number) => resolveReason(reasonOf(v)[0]!)!.defaultAction
    expect([1, 2, 3, 4, 5].map(action)).toEqual(["Reboot", "Reboot", "None", "Reboot", "None"])
  })

  it("messages fill the catalog templates and name the GPU", () => {
    const [f] = recoveryActionFindings(2, 1000, "0000:2a:00")
    expect(f).toMatchObject({
      reason: "NvidiaNodeRebootRequired",
      subject: "0000:2a:00",
      message:
        "GPU 0000:2a:00 needs a node reboot: the driver's recovery action is 0x2 (Node Reboot Required) (XID 154)"
    })
    for (const v of [1, 2, 3, 4, 5]) {
      const d = recoveryActionFindings(v, 1000, "gpu0")[0]!
      const template = CATALOG.find((e) => e.code === d.reason)!.message
      const pattern = new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, ".+")}$`
      )
      expect(d.message).toMatch(pattern)
    }
  })
})
