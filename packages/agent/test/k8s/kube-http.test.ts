import { describe, expect, it } from "vitest"
import { microTime } from "../../src/k8s/kube-http.ts"

describe("MicroTime", () => {
  it("has exactly six fractional digits", () => {
    expect(microTime(Date.parse("2026-11-30T05:00:00.123Z"))).toBe("2026-11-30T05:00:00.123000Z")
  })
})
