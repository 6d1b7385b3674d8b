import { describe, expect, it } from "vitest"
import {
  connected,
  connectionFailed,
  graceExpired,
  initialConnection
} from "../../src/monitors/nvidia/dcgm-connection.ts"

const GRACE = 60_000

describe("DCGM connection state", () => {
  it("failures inside the grace period raise nothing; the first one past it raises DCGMError once", () => {
    let s = initialConnection(0)
    let t = connectionFailed(s, "connection refused", 10_000, GRACE)
    expect(t.findings).toEqual([])
    s = t.state
    t = connectionFailed(s, "connection refused", 60_000, GRACE)
    expect(t.findings).toEqual([
      expect.objectContaining({ _tag: "Detection", reason: "DCGMError", message: "connection refused" })
    ])
    s = t.state
    expect(connectionFailed(s, "again", 90_000, GRACE).findings).toEqual([])
  })
  it("a host engine that comes up within the grace period raises nothing", () => {
    const t = connected(connectionFailed(initialConnection(0), "refused", 5_000, GRACE).state, 8_000)
    expect(t.findings).toEqual([])
    expect(t.state._tag).toBe("Connected")
  })
  it("recovers (Resolution) when the connection is healthy again: not latched", () => {
    const raised = connectionFailed(initialConnection(0), "refused", 70_000, GRACE).state
    expect(connected(raised, 80_000).findings).toEqual([
      expect.objectContaining({ _tag: "Resolution", reason: "DCGMError" })
    ])
  })
  it("a lost connection starts a new outage with its own grace period", () => {
    const up = connected(initialConnection(0), 1_000).state
    const lost = connectionFailed(up, "CONNECTION_NOT_VALID", 100_000, GRACE)
    expect(lost.findings).toEqual([])
    expect(graceExpired(lost.state, 159_999, GRACE).findings).toEqual([])
    expect(graceExpired(lost.state, 160_000, GRACE).findings).toHaveLength(1)
  })
})
