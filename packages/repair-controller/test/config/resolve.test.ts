import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../../src/config/ConfigFile.ts"

describe("config file", () => {
  it("defaults follow the catalog: Ready 30m, AcceleratedHardwareReady 10m with log capture, 20%", () => {
    const c = Result.getOrThrow(decodeConfig({}))
    expect(c.maxUnhealthyPercent).toBe(20)
    expect(c.poolLabel).toBe("karpenter.sh/nodepool")
    expect(
      c.policies.find((p) => p.conditionType === "Ready" && p.status === "Unknown")?.tolerationSeconds
    ).toBe(1800)
    const ahr = c.policies.find((p) => p.conditionType === "AcceleratedHardwareReady")
    expect(ahr?.tolerationSeconds).toBe(600)
    expect(ahr?.captureLogs).toBe(true)
    expect(c.policies.map((p) => p.conditionType)).not.toContain("DiskPressure")
    expect(c.zonalShift).toEqual({ scope: "cluster", onUnknown: "standDown", refreshSeconds: 30 })
  })

  it("overrides per condition type, removes with enabled: false, adds new ones", () => {
    const c = Result.getOrThrow(
      decodeConfig({
        policies: [
          { conditionType: "Ready", status: "False", tolerationSeconds: 5, drainMode: "wait" },
          { conditionType: "Ready", status: "Unknown", enabled: false },
          { conditionType: "FooReady", status: "False", tolerationSeconds: 7, action: "None" }
        ],
        reasons: { "NvidiaXID{code}Error": { action: "Replace" } }
      })
    )
    expect(c.policies.find((p) => p.conditionType === "Ready" && p.status === "False")).toMatchObject({
      tolerationSeconds: 5,
      drainMode: "wait"
    })
    expect(c.policies.find((p) => p.conditionType === "Ready" && p.status === "Unknown")).toBeUndefined()
    expect(c.policies.find((p) => p.conditionType === "FooReady")?.action).toBe("None")
    expect(c.reasons["NvidiaXID{code}Error"]).toEqual({ action: "Replace" })
  })

  it("log capture: skipped without a destination, categories validated", () => {
    expect(Result.getOrThrow(decodeConfig({})).logCapture).toEqual({ timeoutSeconds: 120 })
    const c = Result.getOrThrow(
      decodeConfig({ logCapture: { destination: "https://b/{node}", categories: ["Device"] } })
    )
    expect(c.logCapture).toEqual({
      timeoutSeconds: 120,
      destination: "https://b/{node}",
      categories: ["Device"]
    })
    const bad = decodeConfig({ logCapture: { categories: ["Everything"] } })
    expect(Result.isFailure(bad) && bad.failure.field).toBe("logCapture.categories[0]")
  })

  it("an invalid field is named", () => {
    const r = decodeConfig({ drain: { deadlineSeconds: -1 } }, "c.yaml")
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure.field).toBe("drain.deadlineSeconds")
      expect(r.failure.message).toContain("drain.deadlineSeconds")
    }
  })

  it("an unknown key is rejected and named", () => {
    const r = decodeConfig({ maxUnhealthyPercnt: 10 })
    expect(Result.isFailure(r) && r.failure.field).toBe("maxUnhealthyPercnt")
  })

  it("a bad enum value is named", () => {
    const r = decodeConfig({ reasons: { SoftLockup: { action: "Explode" } } })
    expect(Result.isFailure(r) && r.failure.field).toBe("reasons.SoftLockup.action")
  })
})
