import { readFileSync } from "node:fs"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { LockedEntrySchema, NodeConditionSchema } from "@nodemend/reason-codes/schema"

describe("@nodemend/reason-codes/schema", () => {
  it("decodes a NodeCondition from the API server", () => {
    const c = Schema.decodeUnknownSync(NodeConditionSchema)({
      type: "KernelReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs",
      lastTransitionTime: "2026-11-30T05:00:00Z"
    })
    expect(c.reason).toBe("ForkFailedOutOfPIDs")
  })

  it("names the bad field", () => {
    const r = Schema.decodeUnknownResult(NodeConditionSchema)({ type: "KernelReady", status: "Maybe" })
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) expect(r.failure.message).toMatch(/status/)
  })
})

it("every entry of the committed lock decodes with LockedEntrySchema", () => {
  const lock = JSON.parse(readFileSync(new URL("../api/catalog.lock.json", import.meta.url), "utf8")) as {
    entries: unknown[]
  }
  for (const e of lock.entries) expect(() => Schema.decodeUnknownSync(LockedEntrySchema)(e)).not.toThrow()
  expect(() =>
    Schema.decodeUnknownSync(LockedEntrySchema)({ ...(lock.entries[0] as object), recovery: "never" })
  ).toThrow(/recovery/)
})
