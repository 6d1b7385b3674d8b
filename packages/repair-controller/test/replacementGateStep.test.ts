// The health gate's state-machine step (issue #41): a replacement that fails the gate is no capacity; another is
// launched with a new idempotency token, up to replacement.maxAttempts, then the repair fails. Pure.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { parseRecord, type RepairRecord, serializeRecord } from "../src/domain/RepairRecord.ts"
import {
  type Action,
  advance,
  type Fact,
  nextAction,
  newRepairRecord,
  replacementToken
} from "../src/repair/stateMachine.ts"
import { xid79Match } from "./fixtures.ts"

const config = Result.getOrThrow(
  decodeConfig({ replacement: { timeoutSeconds: 60, healthTimeoutSeconds: 30, maxAttempts: 2 } })
)
const T0 = Date.parse("2026-01-01T00:00:00Z")

const start = (over: Partial<PolicyMatch> = {}) =>
  newRepairRecord(
    {
      id: "r1",
      match: xid79Match(T0, { captureLogs: false, capacityFirst: true, ...over }),
      node: {
        name: "n1",
        uid: "u1",
        providerID: "kwok://n1",
        labels: {},
        instance: { instanceId: "n1", state: "running", launch: {}, owner: { kind: "standalone" } }
      },
      replacementExpects: { agentConditions: ["AcceleratedHardwareReady"], gpus: 8 }
    },
    T0
  )

/** Runs the machine; `gate` answers AwaitReplacement for the nth launch. Returns actions, tokens, the end record. */
const run = (r0: RepairRecord, gate: (launch: number, a: Action) => Fact) => {
  let r = r0
  let now = T0
  const actions: string[] = []
  const tokens: string[] = []
  for (let i = 0; i < 300 && r.phase !== "Succeeded" && r.phase !== "Failed"; i++) {
    const a = nextAction(r, config, now)
    actions.push(a._tag)
    const f = ((): Fact | undefined => {
      switch (a._tag) {
        case "Taint":
          return { _tag: "Tainted" }
        case "Drain":
          return { _tag: "Drained" }
        case "Terminate":
          return { _tag: "InstanceGone" }
        case "DeleteNode":
          return { _tag: "NodeRemoved" }
        case "LaunchReplacement":
          tokens.push(replacementToken(r))
          return { _tag: "ReplacementLaunched", replacement: { nodeName: `n1-${tokens.length}` } }
        case "AwaitReplacement":
          return gate(tokens.length, a)
        default:
          return undefined
      }
    })()
    if (f !== undefined) r = advance(r, f, now)
    r = Result.getOrThrow(parseRecord(serializeRecord(r)))
    now += 1000
  }
  return { r, actions: actions.filter((a, i) => a !== actions[i - 1]), tokens }
}

const gpuShort: Fact = {
  _tag: "ReplacementUnhealthy",
  check: "GpuCapacity",
  why: "nvidia.com/gpu capacity 7, expected 8",
  attemptsAllowed: 2
}

describe("the replacement health gate's step", () => {
  it("keeps what the replacement must show in the record", () => {
    expect(start().replacementExpects).toEqual({ agentConditions: ["AcceleratedHardwareReady"], gpus: 8 })
  })

  it("an unhealthy replacement is no capacity: a second one is launched (a new token), and the drain waits for it", () => {
    const { r, actions, tokens } = run(start(), (launch) =>
      launch === 1 ? gpuShort : { _tag: "ReplacementReady" }
    )
    expect(actions).toEqual([
      "Taint",
      "LaunchReplacement",
      "AwaitReplacement",
      "LaunchReplacement",
      "AwaitReplacement",
      "Drain",
      "Terminate",
      "DeleteNode"
    ])
    expect(tokens).toEqual(["r1", "r1-a2"])
    expect(r.phase).toBe("Succeeded")
    expect(r.replacement).toEqual({ nodeName: "n1-2" })
    expect(r.failedReplacements).toEqual([
      {
        nodeName: "n1-1",
        check: "GpuCapacity",
        why: "nvidia.com/gpu capacity 7, expected 8",
        at: new Date(T0 + 2000).toISOString()
      }
    ])
  })

  it("respects the bound: after maxAttempts unhealthy replacements the repair fails, the node undrained", () => {
    const { r, actions, tokens } = run(start(), () => gpuShort)
    expect(tokens).toHaveLength(2)
    expect(actions).not.toContain("Drain")
    expect(r.phase).toBe("Failed")
    expect(r.failure).toContain("2 replacements failed the health gate")
    expect(r.failedReplacements?.map((f) => f.nodeName)).toEqual(["n1-1", "n1-2"])
  })

  it("the gate's bound counts from when the replacement was first Ready", () => {
    let r = advance(start(), { _tag: "Tainted" }, T0)
    r = advance(r, { _tag: "ReplacementLaunched", replacement: { nodeName: "n1-1" } }, T0)
    expect(nextAction(r, config, T0)).toEqual({ _tag: "AwaitReplacement", timesOutAt: T0 + 60_000 })
    r = advance(r, { _tag: "ReplacementUp" }, T0 + 5000)
    const again = advance(r, { _tag: "ReplacementUp" }, T0 + 9000)
    expect(again).toBe(r)
    expect(nextAction(again, config, T0 + 9000)).toEqual({
      _tag: "AwaitReplacement",
      timesOutAt: T0 + 60_000,
      healthTimesOutAt: T0 + 35_000
    })
  })

  it("remove first: a replacement failing the gate is replaced too, within the same bound", () => {
    const { r, actions } = run(start({ capacityFirst: false }), (launch) =>
      launch === 1 ? gpuShort : { _tag: "ReplacementReady" }
    )
    expect(actions.slice(-4)).toEqual([
      "LaunchReplacement",
      "AwaitReplacement",
      "LaunchReplacement",
      "AwaitReplacement"
    ])
    expect(r.phase).toBe("Succeeded")
    expect(r.failedReplacements).toHaveLength(1)
  })
})
