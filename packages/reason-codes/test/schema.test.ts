import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { NodeConditionSchema } from "@nodemend/reason-codes/schema"

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
