// What the live view says about a node, from a snapshot as snapshot.mjs builds it.
import { describe, expect, it } from "vitest"
import { nodeState, render } from "../src/view.mjs"

const at = Date.parse("2026-12-01T12:00:30Z")
const cond = (type, status, reason, since = "2026-12-01T12:00:00Z") => ({
  type,
  status,
  reason,
  lastTransitionTime: since
})
const node = (name, conditions, extra = {}) => ({
  name,
  pool: "general",
  zone: "us-west-2a",
  ready: "True",
  conditions: [cond("Ready", "True", "KubeletReady"), ...conditions],
  tainted: false,
  vetoed: false,
  deleting: false,
  ...extra
})
const snap = (nodes, rest = {}) => ({ at, nodes, repairs: {}, events: [], metrics: [], shifts: [], ...rest })

describe("view", () => {
  it("a failing node within its toleration shows the time left", () => {
    const n = node("a", [cond("KernelReady", "False", "ForkFailedOutOfPIDs", "2026-12-01T12:00:25Z")])
    expect(nodeState(n, snap([n]))).toBe("KernelReady ForkFailedOutOfPIDs: toleration 5s left")
  })

  it("a node held by the breaker says so, with the counts from the controller's Event", () => {
    const n = node("b", [cond("NetworkingReady", "False", "IPAMDNotReady")])
    const events = [
      {
        uid: "1",
        at,
        node: "b",
        reason: "RepairBlocked",
        message: "more than 20% of nodes are unhealthy in nodepool general (4 of 10, allowed 2)"
      }
    ]
    expect(nodeState(n, snap([n], { events }))).toBe(
      "NetworkingReady IPAMDNotReady: HELD by breaker (4 of 10, allowed 2)"
    )
  })

  it("a node held for relapse says so, with the count and the release command", () => {
    const n = node("h", [cond("KernelReady", "False", "ForkFailedOutOfPIDs")])
    const events = [
      {
        uid: "3",
        at,
        node: "h",
        reason: "RepairHeld",
        message:
          "repair of KernelReady=False (ForkFailedOutOfPIDs) in pool general is held since 2026-12-01T12:00:20.000Z: 3 nodes of pool general came back with ForkFailedOutOfPIDs within 60m of a repair (threshold 3), so repairing more will not help: ..."
      }
    ]
    expect(nodeState(n, snap([n], { events }))).toBe(
      "KernelReady ForkFailedOutOfPIDs: HELD for relapse (3 replacements relapsed within 60m; kubectl nodemend release general ForkFailedOutOfPIDs)"
    )
  })

  it("a queued node shows its place in line when RepairQueued says it", () => {
    const n = node("p", [cond("KernelReady", "False", "ForkFailedOutOfPIDs")])
    const events = [
      {
        uid: "4",
        at,
        node: "p",
        reason: "RepairQueued",
        message:
          'KernelReady=False (ForkFailedOutOfPIDs) is due; waiting for a slot: 1 repairs in flight in pool general, allowed 1 by maxInFlight "1"; queue position 2 of 3 (rank fatal +90m, waiting 0m, backoff -0m)'
      }
    ]
    expect(nodeState(n, snap([n], { events }))).toBe(
      "KernelReady ForkFailedOutOfPIDs: QUEUED: 1 in flight, allowed 1; 2 of 3 in line (fatal)"
    )
  })

  it("a node waiting for a repair slot says so, with the counts from RepairQueued", () => {
    const n = node("q", [cond("KernelReady", "False", "ForkFailedOutOfPIDs")])
    const events = [
      {
        uid: "2",
        at,
        node: "q",
        reason: "RepairQueued",
        message:
          'KernelReady=False (ForkFailedOutOfPIDs) is due; waiting for a slot: 2 repairs in flight in pool general, allowed 2 by maxInFlight "2"'
      }
    ]
    expect(nodeState(n, snap([n], { events }))).toBe(
      "KernelReady ForkFailedOutOfPIDs: QUEUED: 2 in flight, allowed 2"
    )
  })

  it("a vetoed node is never due, and a repair shows its phase from the journal", () => {
    const v = node("c", [cond("KernelReady", "False", "ForkFailedOutOfPIDs")], { vetoed: true })
    const r = node("d", [cond("AcceleratedHardwareReady", "False", "NvidiaXID79Error")], { tainted: true })
    const s = snap([v, r], { repairs: { d: { phase: "Draining", reason: "NvidiaXID79Error" } } })
    expect(nodeState(v, s)).toBe("KernelReady ForkFailedOutOfPIDs: VETOED (do-not-repair), never repaired")
    expect(render(s).find((l) => l.includes(" d "))).toContain(
      "[tainted] repair: Draining (NvidiaXID79Error)"
    )
  })

  it("breaker state per pool comes from the controller's metrics; cluster text loses control characters", () => {
    const n = node("e", [cond("KernelReady", "False", "Bad\u001b[2J\u0007Reason")])
    const metrics = [
      { name: "nodemend_controller_breaker_open", labels: { pool: "general" }, value: 1 },
      { name: "nodemend_controller_pool_unhealthy_nodes", labels: { pool: "general" }, value: 3 },
      { name: "nodemend_controller_pool_nodes", labels: { pool: "general" }, value: 10 }
    ]
    const lines = render(snap([n], { metrics }))
    expect(lines).toContain(
      'pool general: 1 nodes   breaker OPEN (repairs held): unhealthy 3 of 10, allowed 2 (20%)   repairs in flight 0, allowed 1 (maxInFlight "10%")'
    )
    const configured = render(
      snap([n], { metrics, poolSettings: { general: { maxUnhealthyPercent: 40, maxInFlight: "2" } } })
    )
    expect(configured).toContain(
      'pool general: 1 nodes   breaker OPEN (repairs held): unhealthy 3 of 10, allowed 4 (40%)   repairs in flight 0, allowed 2 (maxInFlight "2")'
    )
    for (const line of lines)
      expect([...line].filter((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)).toEqual([])
  })
})
