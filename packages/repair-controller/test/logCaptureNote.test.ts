import { describe, expect, it } from "vitest"
import { logCaptureNote } from "../src/actions/captureLogs.ts"

describe("the LogCapture Event's note", () => {
  const sha256 = "9f".repeat(32)
  it("records the digest the node's agent reported, so the bundle can be checked later", () => {
    expect(logCaptureNote({ outcome: "captured", bundle: { sha256, size: 123456 } })).toBe(
      `pre-termination log capture: captured (bundle sha256 ${sha256}, 123456 bytes)`
    )
  })
  it("says when a captured bundle came without a digest", () => {
    expect(logCaptureNote({ outcome: "captured" })).toBe(
      "pre-termination log capture: captured (the node's agent reported no bundle digest)"
    )
  })
  it.each(["timed-out", "skipped", "failed"] as const)(
    "is the bare outcome when nothing was captured: %s",
    (o) => {
      expect(logCaptureNote({ outcome: o })).toBe(`pre-termination log capture: ${o}`)
    }
  )
})
