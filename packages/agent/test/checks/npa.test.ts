import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Random } from "effect"
import { TestClock } from "effect/testing"
import { NPA_INITIAL, npaCheck, npaStep, parseUnitState, type UnitState } from "../../src/checks/npa.ts"
import type { Detection, Finding } from "../../src/model.ts"
import { runScheduler } from "../../src/scheduler/scheduler.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"
import { reasons } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"

const MIN = 60_000
const T = { notRunningMinutes: 15, restartsPerPoll: 5 }

// `systemctl show aws-network-policy-agent.service -p LoadState,ActiveState,SubState,Result,NRestarts`
// prints the properties in systemd's order, one `Key=value` per line (systemctl(1), "show").
const show = (active: string, sub: string, result: string, restarts: number, load = "loaded") =>
  `NRestarts=${restarts}\nResult=${result}\nLoadState=${load}\nActiveState=${active}\nSubState=${sub}\n`
// The same for a unit that is not installed: exit 0, LoadState=not-found, NRestarts=0.
const NOT_FOUND = show("inactive", "dead", "success", 0, "not-found")

const unit = (
  active: string,
  restarts: number,
  sub = active === "active" ? "running" : "auto-restart"
): UnitState => parseUnitState(show(active, sub, active === "active" ? "success" : "exit-code", restarts))

describe("NPA (aws-network-policy-agent.service)", () => {
  it("parses systemctl show", () => {
    expect(parseUnitState(show("activating", "auto-restart", "exit-code", 12))).toEqual({
      loadState: "loaded",
      activeState: "activating",
      subState: "auto-restart",
      result: "exit-code",
      nRestarts: 12
    })
    expect(parseUnitState("LoadState=loaded\nNRestarts=[not set]\n").nRestarts).toBeUndefined()
  })

  it("NPANotRunning only after 15 min inactive without a break; active resolves and resets", () => {
    let m = NPA_INITIAL
    const step = (s: UnitState | undefined, at: number) => {
      const r = npaStep(m, s, T, at)
      recordProduced(r.findings)
      m = r.memory
      return reasons(r.findings)
    }
    expect(step(unit("failed", 3), 0)).toEqual([])
    expect(step(unit("failed", 3), 5 * MIN)).toEqual([])
    expect(step(unit("failed", 3), 10 * MIN)).toEqual([])
    expect(step(unit("active", 3), 14 * MIN)).toEqual(["-NPANotRunning"])
    expect(step(unit("failed", 3), 15 * MIN)).toEqual([])
    expect(step(unit("failed", 3), 29 * MIN)).toEqual([])
    const r = npaStep(m, unit("failed", 3), T, 30 * MIN)
    expect(reasons(r.findings)).toEqual(["+NPANotRunning"])
    expect(r.findings[0]).toMatchObject({
      severity: "Condition",
      conditionType: "NetworkingReady",
      message: 'NPA is not running on this Auto Mode node (SubState="auto-restart", Result="exit-code")'
    })
  })

  it("NPARepeatedlyRestart on a delta of 5 per poll; the first sample never counts", () => {
    let m = NPA_INITIAL
    const step = (s: UnitState, at: number) => {
      const r = npaStep(m, s, T, at)
      recordProduced(r.findings)
      m = r.memory
      return r.findings.filter((f) => f.reason === "NPARepeatedlyRestart")
    }
    // A long-lived node: 40 restarts before the agent started are not a burst.
    expect(step(unit("active", 40), 0)).toEqual([])
    expect(step(unit("active", 44), 5 * MIN)).toEqual([])
    const burst = step(unit("active", 49), 10 * MIN)
    expect(burst.map((f) => (f as Detection).message)).toEqual([
      'NPA restarted 5 times in last poll interval (threshold: 5, SubState="running", Result="success")'
    ])
    // counter reset (unit reinstalled): no negative delta, just a new baseline
    expect(step(unit("active", 0), 15 * MIN)).toEqual([])
    expect(step(unit("active", 4), 20 * MIN)).toEqual([])
  })

  it("a node without the unit emits nothing (absent is not Unknown); a removed unit clears an earlier fault", () => {
    expect(npaStep(NPA_INITIAL, parseUnitState(NOT_FOUND), T, 0).findings).toEqual([])
    expect(npaStep(NPA_INITIAL, undefined, T, 0).findings).toEqual([])
    const latched = { inactiveSinceMs: 0, previousRestarts: 1, reportedNotRunning: true }
    expect(reasons(npaStep(latched, parseUnitState(NOT_FOUND), T, 20 * MIN).findings)).toEqual([
      "-NPANotRunning"
    ])
  })

  it("systemctl missing or failing: no verdict, nothing emitted, and what was remembered is kept", async () => {
    // inactive at 0, systemctl unavailable at 5 and 10 min, inactive again at 15 min
    let systemctlWorks = true
    const check = npaCheck(
      recordedRunner(() =>
        systemctlWorks ? { stdout: show("activating", "auto-restart", "exit-code", 7) } : "missing"
      ),
      T,
      5 * MIN
    )
    const runAt = (nowMs: number) => Effect.runPromise(check.run({ nowMs, pids: Effect.succeed([]) }))
    expect(await runAt(0)).toEqual([])
    systemctlWorks = false
    expect(await runAt(5 * MIN)).toEqual([])
    expect(await runAt(10 * MIN)).toEqual([])
    systemctlWorks = true
    // the inactive streak began at 0: a failed systemctl neither ended it nor raised anything
    expect(reasons(await runAt(15 * MIN))).toEqual(["+NPANotRunning"])
  })

  it("systemctl exiting non-zero (cannot reach systemd) is no verdict either: a reported NPANotRunning stays", async () => {
    // Captured from systemd 252 (252.39-1~deb12u2) on Debian 12 without systemd as PID 1: exit 1, empty
    // stdout. The unit not being installed is different: exit 0 with LoadState=not-found (NOT_FOUND).
    const unreachable = {
      stdout: "",
      exitCode: 1,
      stderr:
        "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n"
    }
    let reachable = true
    const check = npaCheck(
      recordedRunner(() => (reachable ? { stdout: show("failed", "failed", "exit-code", 7) } : unreachable)),
      T,
      5 * MIN
    )
    const runAt = (nowMs: number) => Effect.runPromise(check.run({ nowMs, pids: Effect.succeed([]) }))
    expect(await runAt(0)).toEqual([])
    expect(reasons(await runAt(15 * MIN))).toEqual(["+NPANotRunning"])
    reachable = false
    // no "-NPANotRunning": systemctl failing says nothing about NPA
    expect(await runAt(20 * MIN)).toEqual([])
    reachable = true
    // and the streak was not restarted: still not running, reported again at once
    expect(reasons(await runAt(25 * MIN))).toEqual(["+NPANotRunning"])
  })

  it.effect(
    "through the scheduler on TestClock: NPANotRunning fires on the first poll >= 15 min after the first inactive one",
    () =>
      Effect.gen(function* () {
        const runner = recordedRunner((cmd, args) =>
          cmd === "systemctl" && args[1] === "aws-network-policy-agent.service"
            ? { stdout: show("activating", "auto-restart", "exit-code", 7) }
            : "missing"
        )
        const seen: { at: number; findings: readonly Finding[] }[] = []
        let clock = 0
        const fiber = yield* runScheduler({
          checks: [npaCheck(runner, T, 5 * MIN)],
          sink: (findings) =>
            Effect.sync(() => {
              recordProduced(findings)
              if (findings.length > 0) seen.push({ at: clock, findings })
            }),
          listPids: Effect.succeed([1]),
          spacingMs: 10,
          onRun: (_n, start) => {
            clock = start
          }
        }).pipe(Effect.forkChild)
        yield* TestClock.adjust("14 minutes")
        expect(seen).toEqual([])
        yield* TestClock.adjust("10 minutes")
        yield* Fiber.interrupt(fiber)
        const polls = runner.calls.length
        expect(polls).toBeGreaterThanOrEqual(4)
        expect(seen).toHaveLength(1 + (polls - 4))
        expect(reasons(seen[0]!.findings)).toEqual(["+NPANotRunning"])
      }).pipe(Random.withSeed(11))
  )
})
