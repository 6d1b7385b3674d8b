// Capacity first (issue #16): the replacement is Ready before a pod moves; when it cannot be had, the policy's
// fallback applies. Pure state machine, plus v2 journal records read as v3.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { xid79Match } from "./fixtures.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { parseRecord, type RepairRecord, serializeRecord } from "../src/domain/RepairRecord.ts"
import { type Action, advance, type Fact, nextAction, newRepairRecord } from "../src/repair/stateMachine.ts"

const config = Result.getOrThrow(decodeConfig({ replacement: { timeoutSeconds: 60 } }))
const T0 = Date.parse("2026-01-01T00:00:00Z")

const match = (over: Partial<PolicyMatch> = {}): PolicyMatch =>
  xid79Match(T0, { captureLogs: false, capacityFirst: true, ...over })

const start = (m: PolicyMatch) =>
  newRepairRecord(
    {
      id: "r1",
      match: m,
      node: {
        name: "n1",
        uid: "u1",
        providerID: "aws:///us-west-2a/i-1",
        labels: {},
        instance: {
          instanceId: "i-1",
          state: "running",
          launch: {},
          owner: { kind: "autoScaling", group: "g" }
        }
      }
    },
    T0
  )

/** Runs the machine; `launch` answers LaunchReplacement/AwaitReplacement. Returns actions and the end record. */
const run = (
  r0: RepairRecord,
  replacement: (a: Action, r: RepairRecord, now: number) => Fact | undefined
) => {
  let r = r0
  let now = T0
  const actions: string[] = []
  for (let i = 0; i < 300 && r.phase !== "Succeeded" && r.phase !== "Failed"; i++) {
    const a = nextAction(r, config, now)
    actions.push(a._tag)
    const f = ((): Fact | undefined => {
      switch (a._tag) {
        case "Taint":
          return { _tag: "Tainted" }
        case "Drain":
        case "ForceDrain":
          return { _tag: "Drained" }
        case "Terminate":
          return { _tag: "InstanceGone" }
        case "DeleteNode":
          return { _tag: "NodeRemoved" }
        default:
          return replacement(a, r, now)
      }
    })()
    if (f !== undefined) r = advance(r, f, now)
    r = Result.getOrThrow(parseRecord(serializeRecord(r)))
    now += 1000
  }
  return { r, actions: actions.filter((a, i) => a !== actions[i - 1]) }
}

const grows = (a: Action): Fact | undefined =>
  a._tag === "LaunchReplacement"
    ? { _tag: "ReplacementLaunched", replacement: { autoScalingGroup: "g", desiredCapacity: 4 } }
    : a._tag === "AwaitReplacement"
      ? { _tag: "ReplacementReady" }
      : undefined

describe("capacity first", () => {
  it("launches and waits for the replacement before the drain; ends when the old node is gone", () => {
    const { r, actions } = run(start(match()), grows)
    expect(actions).toEqual([
      "Taint",
      "LaunchReplacement",
      "AwaitReplacement",
      "Drain",
      "Terminate",
      "DeleteNode"
    ])
    expect(r).toMatchObject({ phase: "Succeeded", order: "capacityFirst" })
    expect(r.replacement).toEqual({ autoScalingGroup: "g", desiredCapacity: 4 })
    // The drain deadline counts from the drain, not from the taint: waiting for capacity does not eat it.
    expect(Date.parse(r.drainDeadline ?? "") - Date.parse(r.drainStartedAt ?? "")).toBe(600_000)
    expect(Date.parse(r.drainStartedAt ?? "")).toBeGreaterThan(Date.parse(r.replacementRequestedAt ?? ""))
  })

  it("progress (the member a grown group launched) is kept without restarting the wait", () => {
    let seen = 0
    const { r } = run(start(match()), (a) => {
      if (a._tag === "LaunchReplacement") return grows(a)
      if (a._tag !== "AwaitReplacement") return undefined
      seen++
      return seen === 1
        ? {
            _tag: "ReplacementProgress",
            replacement: { autoScalingGroup: "g", desiredCapacity: 4, instanceId: "i-2" }
          }
        : { _tag: "ReplacementReady" }
    })
    expect(r.replacement?.instanceId).toBe("i-2")
    expect(r.replacementRequestedAt).toBe(new Date(T0 + 1000).toISOString())
  })

  it("no capacity, onNoCapacity removeFirst: drains and removes anyway, says why, then waits for a replacement", () => {
    let unavailable = false
    const { r, actions } = run(start(match()), (a) => {
      if (a._tag === "LaunchReplacement" && !unavailable) {
        unavailable = true
        return { _tag: "ReplacementUnavailable", why: "group g is at its MaxSize" }
      }
      return grows(a)
    })
    expect(actions).toEqual([
      "Taint",
      "LaunchReplacement",
      "Drain",
      "Terminate",
      "DeleteNode",
      "LaunchReplacement",
      "AwaitReplacement"
    ])
    expect(r).toMatchObject({
      phase: "Succeeded",
      order: "removeFirst",
      fallback: "group g is at its MaxSize"
    })
  })

  it("no capacity, onNoCapacity fail: the node is kept (never drained), the repair fails and says why", () => {
    const { r, actions } = run(start(match({ onNoCapacity: "fail" })), (a) =>
      a._tag === "LaunchReplacement"
        ? { _tag: "ReplacementUnavailable", why: "InsufficientInstanceCapacity" }
        : undefined
    )
    expect(actions).not.toContain("Drain")
    expect(r.phase).toBe("Failed")
    expect(r.failure).toContain("InsufficientInstanceCapacity")
  })

  it("a replacement that never becomes Ready: at the deadline the fallback applies", () => {
    const { r, actions } = run(start(match()), (a, _rec, now) =>
      a._tag === "LaunchReplacement"
        ? grows(a)
        : a._tag === "AwaitReplacement" && now >= a.timesOutAt
          ? { _tag: "ReplacementTimedOut" }
          : undefined
    )
    expect(actions.slice(0, 4)).toEqual(["Taint", "LaunchReplacement", "AwaitReplacement", "Drain"])
    expect(r.fallback).toBe("the replacement did not become Ready in time")
    // Removed first now, the replacement already asked for is awaited again (never launched twice), and a
    // replacement that still does not come ends the repair as Failed, with the taint kept for an operator.
    expect(actions.filter((a) => a === "LaunchReplacement")).toHaveLength(1)
    expect(r).toMatchObject({ phase: "Failed", failure: "replacement did not become Ready in time" })
  })

  it("policy capacityFirst false, and reboots, take the remove-first order", () => {
    expect(start(match({ capacityFirst: false })).order).toBe("removeFirst")
    expect(start(match({ action: "Reboot" })).order).toBe("removeFirst")
  })
})

describe("journal records written before owners (v2)", () => {
  const v2 = (replacer: unknown, launch: Record<string, string> = {}) =>
    JSON.stringify({
      ...JSON.parse(serializeRecord(start(match()))),
      v: 2,
      order: undefined,
      onNoCapacity: undefined,
      node: {
        name: "n1",
        uid: "u1",
        providerID: "aws:///us-west-2a/i-1",
        labels: {},
        instance: { instanceId: "i-1", state: "running", launch, replacer }
      }
    })

  it.each([
    [{ by: "nodemend" }, {}, { kind: "standalone" }],
    [{ by: "autoScaling" }, { autoScalingGroup: "g" }, { kind: "autoScaling", group: "g" }],
    [{ by: "none", why: "no template" }, {}, { kind: "unknown", why: "no template" }]
  ])(
    "replacer %j is read as owner %j, in the remove-first order it was started in",
    (replacer, launch, owner) => {
      const r = Result.getOrThrow(parseRecord(v2(replacer, launch)))
      expect(r.v).toBe(3)
      expect(r.order).toBe("removeFirst")
      expect(r.node.instance.owner).toEqual(owner)
    }
  )

  it("a malformed record is still refused, not guessed at", () => {
    expect(Result.isFailure(parseRecord('{"v":2,"node":7}'))).toBe(true)
  })
})
