import { describe, expect, it } from "vitest"
import type { NodeDiagnostic } from "@nodemend/kube-access/NodeDiagnostic"
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
