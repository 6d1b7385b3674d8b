import type { ConditionType } from "@nodemend/reason-codes"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyFinding,
  conditionPatch,
  desiredConditions,
  emptyState,
  MAX_MESSAGE_BYTES,
  parseBootMarker,
  restoreState,
  type ConditionState,
  type CurrentCondition
} from "../../src/k8s/condition-state.ts"
import type { Detection, Finding, Resolution } from "../../src/model.ts"

const BOOT = "0f3c5b0e-1111-4222-8333-444455556666"
const OTHER_BOOT = "9a9a9a9a-1111-4222-8333-444455556666"
const ALL: ReadonlySet<ConditionType> = new Set([
  "KernelReady",
  "ContainerRuntimeReady",
  "NetworkingReady",
  "StorageReady",
  "AcceleratedHardwareReady"
])
const T0 = Date.parse("2026-11-30T05:00:00Z")
const HB = 300_000

const det = (reason: string, conditionType: ConditionType, extra: Partial<Detection> = {}): Detection => ({
  _tag: "Detection",
  monitor: conditionType === "NetworkingReady" ? "networking" : "kernel",
  reason,
  conditionType,
  severity: "Condition",
  message: `${reason} happened`,
  observedAtMs: T0,
  ...extra
})
const res = (reason: string, conditionType: ConditionType, subject?: string): Resolution => ({
  _tag: "Resolution",
  monitor: "networking",
  reason,
  conditionType,
  observedAtMs: T0,
  ...(subject === undefined ? {} : { subject })
})
const fold = (findings: readonly Finding[], from: ConditionState = emptyState) =>
  findings.reduce(applyFinding, from)

/** What the API server holds after applying our patch entries (SMP merge by type). */
const applyPatch = (current: CurrentCondition[], now: number, state: ConditionState, managed = ALL) => {
  const entries = conditionPatch(desiredConditions(state, managed, BOOT), current, now, HB)
  let next = [...current]
  for (const e of entries) {
    next = next.filter((c) => c.type !== e.type)
    if (!("$patch" in e)) next.push(e)
  }
  return { entries, next }
}

const kubeletReady: CurrentCondition = {
  type: "Ready",
  status: "True",
  reason: "KubeletReady",
  message: "kubelet is posting ready status",
  lastHeartbeatTime: new Date(T0 - 5000),
  lastTransitionTime: new Date(T0 - 50_000)
}

describe("desired conditions", () => {
  it("every managed type is True with its ready reason when nothing is wrong", () => {
    const d = desiredConditions(emptyState, ALL, BOOT)
    expect([...d.values()].map((c) => [c.type, c.status, c.reason])).toEqual([
      ["KernelReady", "True", "KernelIsReady"],
      ["ContainerRuntimeReady", "True", "ContainerRuntimeIsReady"],
      ["NetworkingReady", "True", "NetworkingIsReady"],
      ["StorageReady", "True", "DiskIsReady"],
      ["AcceleratedHardwareReady", "True", "NvidiaGPUIsReady"]
    ])
  })

  it("a Condition detection sets its type False with the reason and a boot-id marker", () => {
    const s = fold([det("ForkFailedOutOfPIDs", "KernelReady")])
    const k = desiredConditions(s, ALL, BOOT).get("KernelReady")!
    expect(k.status).toBe("False")
    expect(k.reason).toBe("ForkFailedOutOfPIDs")
    expect(k.message).toBe(`ForkFailedOutOfPIDs: ForkFailedOutOfPIDs happened [boot-id=${BOOT}]`)
    expect(parseBootMarker(k.message).bootId).toBe(BOOT)
    expect(desiredConditions(s, ALL, BOOT).get("NetworkingReady")!.status).toBe("True")
  })

  it("Event-severity detections never touch a condition", () => {
    expect(fold([det("SoftLockup", "KernelReady", { severity: "Event" })])).toBe(emptyState)
  })

  it("unmanaged types are absent", () => {
    const d = desiredConditions(emptyState, new Set<ConditionType>(["KernelReady"]), BOOT)
    expect([...d.keys()]).toEqual(["KernelReady"])
  })

  it("the reason is the latest fault; the message lists distinct faults newest first", () => {
    const s = fold([
      det("InterfaceNotUp", "NetworkingReady", { subject: "eth1", message: "eth1 down" }),
      det("IPAMDNotRunning", "NetworkingReady", { message: "ipamd gone" }),
      det("InterfaceNotUp", "NetworkingReady", { subject: "eth1", message: "eth1 down" })
    ])
    const n = desiredConditions(s, ALL, BOOT).get("NetworkingReady")!
    expect(n.reason).toBe("InterfaceNotUp")
    expect(n.message).toBe(`InterfaceNotUp: eth1 down; IPAMDNotRunning: ipamd gone [boot-id=${BOOT}]`)
  })

  it("messages stay within 1 KiB however many faults arrive", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 600 })), { maxLength: 80 }),
        (xs) => {
          const s = fold(
            xs.map(([subject, message]) => det("InterfaceNotUp", "NetworkingReady", { subject, message }))
          )
          const n = desiredConditions(s, ALL, BOOT).get("NetworkingReady")!
          expect(Buffer.byteLength(n.message)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES)
          if (xs.length > 0) expect(parseBootMarker(n.message).bootId).toBe(BOOT)
        }
      )
    )
  })
})

describe("recovery", () => {
  it("an auto-recovery fault clears when its monitor reports it resolved", () => {
    const s = fold([det("IPAMDNotRunning", "NetworkingReady"), res("IPAMDNotRunning", "NetworkingReady")])
    expect(desiredConditions(s, ALL, BOOT).get("NetworkingReady")!.status).toBe("True")
  })

  it("a resolution with a subject clears only that subject", () => {
    const s = fold([
      det("InterfaceNotUp", "NetworkingReady", { subject: "eth1" }),
      det("InterfaceNotUp", "NetworkingReady", { subject: "eth2" }),
      res("InterfaceNotUp", "NetworkingReady", "eth1")
    ])
    expect(s.get("NetworkingReady")!.map((f) => f.subject)).toEqual(["eth2"])
    const cleared = applyFinding(s, res("InterfaceNotUp", "NetworkingReady", "eth2"))
    expect(desiredConditions(cleared, ALL, BOOT).get("NetworkingReady")!.status).toBe("True")
  })

  it("a reboot-recovery fault ignores resolutions", () => {
    const s = fold([det("ForkFailedOutOfPIDs", "KernelReady"), res("ForkFailedOutOfPIDs", "KernelReady")])
    expect(desiredConditions(s, ALL, BOOT).get("KernelReady")!.status).toBe("False")
  })

  it("agent restart, same boot: the False condition is kept", () => {
    const written = desiredConditions(fold([det("ForkFailedOutOfPIDs", "KernelReady")]), ALL, BOOT).get(
      "KernelReady"
    )!
    const restored = restoreState(ALL, [{ ...written }], BOOT, T0)
    const again = desiredConditions(restored, ALL, BOOT).get("KernelReady")!
    expect(again).toEqual(written)
  })

  it("agent restart, new boot: the condition returns to True", () => {
    const written = desiredConditions(fold([det("ForkFailedOutOfPIDs", "KernelReady")]), ALL, BOOT).get(
      "KernelReady"
    )!
    const restored = restoreState(ALL, [{ ...written }], OTHER_BOOT, T0)
    expect(desiredConditions(restored, ALL, OTHER_BOOT).get("KernelReady")!.status).toBe("True")
  })

  it("a False condition without a marker is kept and adopted into this boot", () => {
    const restored = restoreState(
      ALL,
      [{ type: "KernelReady", status: "False", reason: "ForkFailedOutOfPIDs", message: "x" }],
      BOOT,
      T0
    )
    expect(desiredConditions(restored, ALL, BOOT).get("KernelReady")!.message).toBe(`x [boot-id=${BOOT}]`)
  })

  it("a restored auto fault clears on a resolution of its reason whatever the subject", () => {
    const restored = restoreState(
      ALL,
      [{ type: "NetworkingReady", status: "False", reason: "InterfaceNotUp", message: "x" }],
      BOOT,
      T0
    )
    const s = applyFinding(restored, res("InterfaceNotUp", "NetworkingReady", "eth1"))
    expect(desiredConditions(s, ALL, BOOT).get("NetworkingReady")!.status).toBe("True")
  })

  it("restore ignores kubelet's conditions and unmanaged types", () => {
    const s = restoreState(
      new Set<ConditionType>(["KernelReady"]),
      [kubeletReady, { type: "NetworkingReady", status: "False", reason: "IPAMDNotRunning", message: "x" }],
      BOOT,
      T0
    )
    expect(s.size).toBe(0)
  })
})

describe("condition patch", () => {
  it("first write: all five, and never kubelet's Ready", () => {
    const { entries, next } = applyPatch([kubeletReady], T0, emptyState)
    expect(entries.map((e) => e.type)).toEqual([...ALL])
    expect(next.find((c) => c.type === "Ready")).toBe(kubeletReady)
  })

  it("writes only on change, then on the heartbeat", () => {
    let { next } = applyPatch([kubeletReady], T0, emptyState)
    expect(applyPatch(next, T0 + 60_000, emptyState).entries).toEqual([])
    const beat = applyPatch(next, T0 + HB, emptyState)
    expect(beat.entries).toHaveLength(5)
    expect(
      beat.entries.every((e) => "lastHeartbeatTime" in e && e.lastHeartbeatTime === "2026-11-30T05:05:00Z")
    ).toBe(true)
    next = beat.next
    const s = fold([det("IPAMDNotRunning", "NetworkingReady")])
    const changed = applyPatch(next, T0 + HB + 1000, s)
    expect(changed.entries.map((e) => e.type)).toEqual(["NetworkingReady"])
  })

  it("keeps lastTransitionTime while the status stays False and the message changes", () => {
    const s1 = fold([det("InterfaceNotUp", "NetworkingReady", { subject: "eth1", message: "eth1 down" })])
    const a = applyPatch([], T0, s1)
    const s2 = applyFinding(
      s1,
      det("InterfaceNotUp", "NetworkingReady", { subject: "eth2", message: "eth2 down" })
    )
    const b = applyPatch(a.next, T0 + 10_000, s2)
    const before = a.next.find((c) => c.type === "NetworkingReady")!
    const after = b.next.find((c) => c.type === "NetworkingReady")!
    expect(after.message).not.toBe(before.message)
    expect(after.lastTransitionTime).toBe("2026-11-30T05:00:00Z")
    expect(after.lastHeartbeatTime).toBe("2026-11-30T05:00:10Z")
    const c = applyPatch(b.next, T0 + 20_000, emptyState)
    expect(c.next.find((x) => x.type === "NetworkingReady")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-30T05:00:20Z"
    })
  })

  it("accepts Dates from client-node for the current times", () => {
    const current: CurrentCondition[] = [
      {
        type: "KernelReady",
        status: "True",
        reason: "KernelIsReady",
        message: "Monitoring for the Kernel system is active",
        lastHeartbeatTime: new Date(T0),
        lastTransitionTime: new Date(T0 - 1000)
      }
    ]
    const e = conditionPatch(
      desiredConditions(emptyState, new Set<ConditionType>(["KernelReady"]), BOOT),
      current,
      T0 + HB,
      HB
    )
    expect(e).toEqual([
      {
        type: "KernelReady",
        status: "True",
        reason: "KernelIsReady",
        message: "Monitoring for the Kernel system is active",
        lastHeartbeatTime: "2026-11-30T05:05:00Z",
        lastTransitionTime: new Date(T0 - 1000).toISOString()
      }
    ])
  })

  it("a type of ours that is no longer managed is deleted by type; others are left alone", () => {
    const { next } = applyPatch([kubeletReady], T0, emptyState)
    const managed = new Set<ConditionType>([
      "KernelReady",
      "NetworkingReady",
      "StorageReady",
      "ContainerRuntimeReady"
    ])
    const r = applyPatch(next, T0 + 1000, emptyState, managed)
    expect(r.entries).toEqual([{ type: "AcceleratedHardwareReady", $patch: "delete" }])
    expect(r.next.map((c) => c.type).sort()).toEqual([
      "ContainerRuntimeReady",
      "KernelReady",
      "NetworkingReady",
      "Ready",
      "StorageReady"
    ])
  })
})
