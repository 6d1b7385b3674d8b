import { describe, expect, it } from "vitest"
import { eventName, microTime, nodeEventBody } from "../src/Events.ts"

describe("MicroTime", () => {
  it("has exactly six fractional digits", () => {
    expect(microTime(Date.parse("2026-11-30T05:00:00.123Z"))).toBe("2026-11-30T05:00:00.123000Z")
  })
})

describe("Node events", () => {
  it("are named <node>.<hex nanoseconds><random>, unique within one millisecond", () => {
    const at = Date.parse("2026-11-30T05:00:00.123Z")
    const a = eventName("n1", at)
    expect(a).toMatch(new RegExp(`^n1\\.${(BigInt(at) * 1_000_000n).toString(16)}[0-9a-f]{8}$`))
    expect(eventName("n1", at)).not.toBe(a)
    expect(eventName("x".repeat(300), at).split(".")[0]).toHaveLength(200)
  })

  it("carry the API server's field limits and a MicroTime", () => {
    const body = nodeEventBody({
      node: { name: "n1", uid: "u1" },
      type: "Warning",
      reason: "r".repeat(200),
      action: "a",
      note: "n".repeat(2000),
      reportingController: "nodemend.io/agent",
      reportingInstance: "i".repeat(200),
      atMs: Date.parse("2026-11-30T05:00:00.123Z")
    })
    expect(body.metadata.namespace).toBe("default")
    expect(body.eventTime).toBe("2026-11-30T05:00:00.123000Z")
    expect([body.reason.length, body.note.length, body.reportingInstance.length]).toEqual([128, 1024, 128])
    expect(body.regarding).toEqual({ apiVersion: "v1", kind: "Node", name: "n1", uid: "u1" })
  })

  it("may be about another cluster-scoped object (a Karpenter NodePool)", () => {
    const body = nodeEventBody({
      node: { name: "gpu", uid: "u2", apiVersion: "karpenter.sh/v1", kind: "NodePool" },
      type: "Warning",
      reason: "RepairBlocked",
      action: "Decide",
      note: "n",
      reportingController: "nodemend.io/repair-controller",
      reportingInstance: "i"
    })
    expect(body.regarding).toEqual({
      apiVersion: "karpenter.sh/v1",
      kind: "NodePool",
      name: "gpu",
      uid: "u2"
    })
  })
})
