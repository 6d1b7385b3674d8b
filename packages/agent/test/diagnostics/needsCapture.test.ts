import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import type { NodeDiagnostic } from "../../src/diagnostics/NodeDiagnostic.ts"
import { needsCapture } from "../../src/diagnostics/NodeDiagnosticController.ts"

const nd = (generation: number, state?: object): NodeDiagnostic =>
  ({
    metadata: { name: "n", generation },
    spec: { logCapture: { destination: "node" } },
    ...(state ? { status: { captureStatuses: [{ type: "Log", state }] } } : {})
  }) as NodeDiagnostic

const completed = (observedGeneration: number) => ({
  completed: { reason: "Success", message: "", startedAt: "t", finishedAt: "t", observedGeneration }
})

describe("needsCapture", () => {
  it("captures a new object, a newer generation, and a capture left running by a stopped agent", () => {
    expect(needsCapture(nd(1))).toBe(true)
    expect(needsCapture(nd(2, completed(1)))).toBe(true)
    expect(needsCapture(nd(1, { running: { startedAt: "t" } }))).toBe(true)
  })
  it("does not repeat a completed generation, and ignores objects without logCapture", () => {
    expect(needsCapture(nd(1, completed(1)))).toBe(false)
    expect(needsCapture({ metadata: { name: "n", generation: 1 }, spec: {} })).toBe(false)
  })
})

describe("watchBackoff", () => {
  it("re-watches at once after a normal end, slowly after HTTP errors (no CRD), briefly after network errors", async () => {
    const { watchBackoff } = await import("../../src/diagnostics/NodeDiagnosticController.ts")
    expect(watchBackoff(null)).toEqual(Duration.zero)
    expect(watchBackoff(Object.assign(new Error("timeout"), { name: "TimeoutError" }))).toEqual(Duration.zero)
    const notFound = Object.assign(new Error("Not Found"), { statusCode: 404 })
    expect(watchBackoff(notFound, 1)).toEqual(Duration.seconds(1))
    expect(watchBackoff(notFound, 3)).toEqual(Duration.seconds(4))
    expect(watchBackoff(notFound, 20)).toEqual(Duration.seconds(60))
    expect(watchBackoff(new TypeError("fetch failed"))).toBe("2 seconds")
  })
})
