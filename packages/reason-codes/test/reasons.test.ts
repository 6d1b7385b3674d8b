// The pure helpers customers call on a condition's or Event's reason.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  CATALOG,
  type CatalogCode,
  type CatalogEntry,
  defaultActionFor,
  formatReason,
  isFatalReason,
  parseReason
} from "@nodemend/reason-codes"

const templated = (CATALOG as readonly CatalogEntry[]).filter((e) => e.parameters !== undefined)

const paramValue = (type: "integer" | "string") =>
  type === "integer"
    ? fc.integer({ min: 0, max: 2 ** 31 - 1 })
    : fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9@_.:-]{0,30}$/)

describe("parseReason / formatReason", () => {
  it("splits a reason into its catalog key and typed parameters", () => {
    expect(parseReason("NvidiaXID79Error")).toEqual({ code: "NvidiaXID{code}Error", params: { code: 79 } })
    expect(parseReason("containerdRepeatedRestart")).toEqual({
      code: "{unit}RepeatedRestart",
      params: { unit: "containerd" }
    })
    expect(parseReason("SoftLockup")).toEqual({ code: "SoftLockup", params: {} })
    for (const r of [
      "",
      "NvidiaXIDError",
      "NvidiaXID-1Error",
      "NvidiaXID007Error",
      "softlockup",
      "FromTheFuture"
    ])
      expect(parseReason(r), r).toBeUndefined()
  })

  it("every templated code formats and parses back to the same parameters", () => {
    for (const entry of templated) {
      const params = fc.record(
        Object.fromEntries((entry.parameters ?? []).map((p) => [p.name, paramValue(p.type)]))
      ) as fc.Arbitrary<Record<string, string | number>>
      fc.assert(
        fc.property(params, (p) => {
          const reason = formatReason(entry.code as CatalogCode, p)
          expect(parseReason(reason)).toEqual({ code: entry.code, params: p })
        })
      )
    }
  })

  it("refuses parameters a reason cannot carry", () => {
    expect(() => formatReason("NvidiaXID{code}Error")).toThrow(/missing parameter "code"/)
    expect(() => formatReason("NvidiaXID{code}Error", { code: -1 })).toThrow(/cannot be -1/)
    expect(() => formatReason("NvidiaXID{code}Error", { code: "79x" })).toThrow(/cannot be "79x"/)
    expect(() => formatReason("{unit}RepeatedRestart", { unit: "a b" })).toThrow(/cannot be "a b"/)
  })
})

describe("isFatalReason / defaultActionFor", () => {
  it("follow the catalog and the per-XID actions", () => {
    expect([isFatalReason("NvidiaXID79Error"), defaultActionFor("NvidiaXID79Error")]).toEqual([
      true,
      "Reboot"
    ])
    expect([isFatalReason("NvidiaXID142Error"), defaultActionFor("NvidiaXID142Error")]).toEqual([
      true,
      "Replace"
    ])
    expect([isFatalReason("NvidiaXID48Error"), defaultActionFor("NvidiaXID48Error")]).toEqual([
      true,
      "Reboot"
    ])
    expect([isFatalReason("NvidiaXID13Warning"), defaultActionFor("NvidiaXID13Warning")]).toEqual([
      false,
      "None"
    ])
    expect([isFatalReason("SoftLockup"), defaultActionFor("SoftLockup")]).toEqual([false, "None"])
    expect([isFatalReason("FromTheFuture"), defaultActionFor("FromTheFuture")]).toEqual([false, undefined])
    for (const e of CATALOG as readonly CatalogEntry[])
      if (e.parameters === undefined) expect(isFatalReason(e.code), e.code).toBe(e.severity === "Condition")
  })
})
