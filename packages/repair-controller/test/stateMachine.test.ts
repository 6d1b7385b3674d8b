import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { xid79Match } from "./fixtures.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { parseRecord, type RepairRecord, serializeRecord } from "../src/domain/RepairRecord.ts"
import { type Action, advance, type Fact, nextAction, newRepairRecord } from "../src/repair/stateMachine.ts"

const config = Result.getOrThrow(decodeConfig({ reboot: { settleSeconds: 60, timeoutSeconds: 600 } }))
const T0 = Date.parse("2026-01-01T00:00:00Z")

const match = (over: Partial<PolicyMatch> = {}): PolicyMatch => xid79Match(T0, { ...over })

const start = (m: PolicyMatch) =>
  newRepairRecord(
    {
      id: "r1",
      match: m,
      node: {
        name: "n1",
        uid: "uid-n1",
        providerID: "kwok://n1",
        labels: { a: "b" },
        instance: {
          instanceId: "kwok://n1",
          state: "running",
          launch: { cpu: "8" },
          owner: { kind: "standalone" }
        }
      }
    },
    T0
  )

/** Runs the machine with a scripted environment; returns the actions taken in order. */
const run = (r0: RepairRecord, respond: (a: Action, r: RepairRecord, now: number) => Fact | undefined) => {
  let r = r0
  let now = T0
  const actions: string[] = []
  for (let i = 0; i < 200 && r.phase !== "Succeeded" && r.phase !== "Failed"; i++) {
    const a = nextAction(r, config, now)
    actions.push(a._tag)
    const f = respond(a, r, now)
    if (f !== undefined) r = advance(r, f, now)
    // Every record survives a round-trip through its annotation form.
    r = Result.getOrThrow(parseRecord(serializeRecord(r)))
    now += 1000
  }
  return { r, actions }
}

const happyEnv =
  (opts: { stillFailingAfterReboot?: boolean } = {}) =>
  (a: Action, _r: RepairRecord, now: number): Fact | undefined => {
    switch (a._tag) {
      case "Taint":
        return { _tag: "Tainted" }
      case "Drain":
      case "ForceDrain":
        return { _tag: "Drained" }
      case "CaptureLogs":
        return { _tag: "LogCaptureFinished", outcome: "captured" }
      case "Reboot":
        return { _tag: "RebootRequested" }
      case "AwaitReboot":
        return now >= a.settledAt
          ? { _tag: "NodeBack", stillFailing: opts.stillFailingAfterReboot ?? false }
          : undefined
      case "Terminate":
        return { _tag: "TerminateRequested" }
      case "AwaitInstanceGone":
        return { _tag: "InstanceGone" }
      case "DeleteNode":
        return { _tag: "NodeRemoved" }
      case "LaunchReplacement":
        return { _tag: "ReplacementLaunched", replacement: { instanceId: "kwok://n1-r", nodeName: "n1-r" } }
      case "AwaitReplacement":
        return { _tag: "ReplacementReady" }
      case "Untaint":
        return { _tag: "Untainted" }
      case "Done":
        return undefined
    }
  }

describe("repair state machine", () => {
  it("replace: taint, drain, capture logs, terminate, remove node, replacement Ready", () => {
    const { r, actions } = run(start(match()), happyEnv())
    expect(actions).toEqual([
      "Taint",
      "Drain",
      "CaptureLogs",
      "Terminate",
      "AwaitInstanceGone",
      "DeleteNode",
      "LaunchReplacement",
      "AwaitReplacement"
    ])
    expect(r.phase).toBe("Succeeded")
    expect(r.logsCaptured).toBe("captured")
    expect(r.replacement?.nodeName).toBe("n1-r")
  })

  it("no log capture unless the policy asks", () => {
    const { actions } = run(start(match({ captureLogs: false })), happyEnv())
    expect(actions).not.toContain("CaptureLogs")
  })

  it("reboot that clears the condition: untaint and done, no termination", () => {
    const { r, actions } = run(start(match({ action: "Reboot", captureLogs: false })), happyEnv())
    expect(r.phase).toBe("Succeeded")
    expect(actions.filter((a) => a === "Reboot")).toHaveLength(1)
    expect(actions).not.toContain("Terminate")
    expect(actions.at(-1)).toBe("Untaint")
  })

  it("reboot that does not clear the condition escalates to Replace (logs captured first)", () => {
    const { r, actions } = run(
      start(match({ action: "Reboot" })),
      happyEnv({ stillFailingAfterReboot: true })
    )
    expect(r).toMatchObject({ phase: "Succeeded", action: "Replace", escalatedFrom: "Reboot" })
    expect(actions.indexOf("CaptureLogs")).toBeGreaterThan(actions.indexOf("AwaitReboot"))
    expect(actions).toContain("Terminate")
  })

  it("the drain deadline: force deletes, wait keeps draining", () => {
    const force = advance(start(match()), { _tag: "Tainted" }, T0)
    expect(nextAction(force, config, T0 + 599_000)._tag).toBe("Drain")
    expect(nextAction(force, config, T0 + 600_000)._tag).toBe("ForceDrain")
    const wait = advance(start(match({ drainMode: "wait" })), { _tag: "Tainted" }, T0)
    expect(nextAction(wait, config, T0 + 600_000)).toEqual({ _tag: "Drain", deadlinePassed: true })
  })

  it("resume: a record persisted after terminate never plans a second Terminate", () => {
    let r = start(match({ captureLogs: false }))
    for (const f of [{ _tag: "Tainted" }, { _tag: "Drained" }, { _tag: "TerminateRequested" }] as const)
      r = advance(r, f, T0)
    const resumed = Result.getOrThrow(parseRecord(serializeRecord(r)))
    expect(nextAction(resumed, config, T0 + 5000)._tag).toBe("AwaitInstanceGone")
  })

  it("replacement timeout fails the repair and keeps the record", () => {
    let r = start(match({ captureLogs: false }))
    r = advance(r, { _tag: "Tainted" }, T0)
    r = advance(r, { _tag: "Drained" }, T0)
    r = advance(r, { _tag: "InstanceGone" }, T0)
    r = advance(r, { _tag: "NodeRemoved" }, T0)
    r = advance(r, { _tag: "ReplacementLaunched", replacement: { instanceId: "i" } }, T0)
    const a = nextAction(r, config, T0)
    expect(a._tag === "AwaitReplacement" && a.timesOutAt).toBe(T0 + 1_200_000)
    r = advance(r, { _tag: "ReplacementTimedOut" }, T0 + 1_200_000)
    expect(r.phase).toBe("Failed")
    expect(nextAction(r, config, T0)._tag).toBe("Done")
  })

  it("facts that do not fit the phase change nothing", () => {
    const r = start(match())
    expect(advance(r, { _tag: "InstanceGone" }, T0)).toEqual(r)
  })

  it("a malformed annotation is rejected, not guessed at", () => {
    expect(Result.isFailure(parseRecord("{}"))).toBe(true)
    expect(Result.isFailure(parseRecord("not json"))).toBe(true)
  })
})

describe("a reboot that did not heal a node nobody can replace", () => {
  it("ends Failed instead of terminating capacity that cannot come back (the owner's word on the fact)", () => {
    const rebooting = () => {
      let r = advance(start(match({ action: "Reboot" })), { _tag: "Tainted" }, T0)
      r = advance(r, { _tag: "Drained" }, T0)
      expect(r.phase).toBe("Rebooting")
      return r
    }
    const timedOut = advance(rebooting(), { _tag: "RebootTimedOut", cannotReplace: "no template" }, T0)
    expect(timedOut.phase).toBe("Failed")
    expect(timedOut.failure).toContain("no replacement can be launched: no template")
    const still = advance(
      rebooting(),
      { _tag: "NodeBack", stillFailing: true, cannotReplace: "no template" },
      T0
    )
    expect(still.phase).toBe("Failed")
    // An owner that can replace: the reboot escalates.
    expect(advance(rebooting(), { _tag: "RebootTimedOut" }, T0)).toMatchObject({
      action: "Replace",
      escalatedFrom: "Reboot"
    })
  })
})
