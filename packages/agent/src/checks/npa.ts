/**
 * NPANotRunning and NPARepeatedlyRestart (reference 2.5) from
 * `systemctl show aws-network-policy-agent.service -p LoadState,ActiveState,SubState,Result,NRestarts`
 * (NMA reads the same properties over D-Bus).
 *
 * NMA issue #268: NMA gates these on EKS Auto Mode, so nodes that run the network policy agent without
 * Auto Mode are never watched. Here the gate is the unit itself: the check watches whenever the unit is
 * loaded on the node (LoadState=loaded), and a node without it gets nothing at all (absent, not Unknown).
 *
 * - NPANotRunning: ActiveState other than `active` continuously for `notRunningMinutes` (15). The first
 *   inactive sighting records the time; `active` resets it and resolves the reason.
 * - NPARepeatedlyRestart: NRestarts grew by `restartsPerPoll` (5) or more since the previous poll. The
 *   first sample only records, so restarts from before the agent started never count.
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection, resolution } from "./finding.ts"

export const NPA_UNIT = "aws-network-policy-agent.service"

export interface NpaThresholds {
  readonly notRunningMinutes: number
  readonly restartsPerPoll: number
}

export interface UnitState {
  readonly loadState: string
  readonly activeState: string
  readonly subState: string
  readonly result: string
  /** Undefined when systemd does not report it (older systemd, or `[not set]`). */
  readonly nRestarts: number | undefined
}

/** `systemctl show -p ...` prints `Key=value` lines. */
export const parseUnitState = (stdout: string): UnitState => {
  const props = new Map<string, string>()
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=")
    if (eq > 0) props.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim())
  }
  const n = props.get("NRestarts")
  const restarts = n !== undefined && /^[0-9]+$/.test(n) ? Number(n) : undefined
  return {
    loadState: props.get("LoadState") ?? "",
    activeState: props.get("ActiveState") ?? "",
    subState: props.get("SubState") ?? "",
    result: props.get("Result") ?? "",
    nRestarts: restarts
  }
}

/** What the check remembers between polls. */
export interface NpaMemory {
  readonly inactiveSinceMs: number | undefined
  readonly previousRestarts: number | undefined
  readonly reportedNotRunning: boolean
}

export const NPA_INITIAL: NpaMemory = {
  inactiveSinceMs: undefined,
  previousRestarts: undefined,
  reportedNotRunning: false
}

/** The decision for one poll: findings and the memory for the next one. `state` undefined: no unit. */
export const npaStep = (
  memory: NpaMemory,
  state: UnitState | undefined,
  thresholds: NpaThresholds,
  nowMs: number
): { readonly findings: Finding[]; readonly memory: NpaMemory } => {
  if (state === undefined || state.loadState !== "loaded") {
    // Not installed (or removed): not watching. A fault reported earlier is not left latched.
    return {
      findings: memory.reportedNotRunning ? [resolution("NPANotRunning", nowMs)] : [],
      memory: NPA_INITIAL
    }
  }
  const findings: Finding[] = []
  const details = `SubState="${state.subState}", Result="${state.result}"`
  const before = memory.previousRestarts
  const now = state.nRestarts
  if (before !== undefined && now !== undefined && now - before >= thresholds.restartsPerPoll)
    findings.push(
      detection(
        "NPARepeatedlyRestart",
        `NPA restarted ${now - before} times in last poll interval (threshold: ${thresholds.restartsPerPoll}, ${details})`,
        nowMs
      )
    )
  if (state.activeState === "active") {
    findings.push(resolution("NPANotRunning", nowMs))
    return {
      findings,
      memory: { inactiveSinceMs: undefined, previousRestarts: now, reportedNotRunning: false }
    }
  }
  const since = memory.inactiveSinceMs ?? nowMs
  const notRunning = nowMs - since >= thresholds.notRunningMinutes * 60_000
  if (notRunning)
    findings.push(detection("NPANotRunning", `NPA is not running on this Auto Mode node (${details})`, nowMs))
  return {
    findings,
    memory: {
      inactiveSinceMs: since,
      previousRestarts: now,
      reportedNotRunning: memory.reportedNotRunning || notRunning
    }
  }
}

export const npaCheck = (
  runner: CommandRunner["Service"],
  thresholds: NpaThresholds,
  intervalMs: number
): PeriodicCheck => {
  let memory = NPA_INITIAL
  return {
    name: "npa",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const r = yield* runner
          .run("systemctl", ["show", NPA_UNIT, "-p", "LoadState,ActiveState,SubState,Result,NRestarts"], {
            timeoutMs: 10_000
          })
          .pipe(
            Effect.catch((e) =>
              Effect.logWarning("systemctl failed; npa not watching this run", { error: e.message }).pipe(
                Effect.as(undefined)
              )
            )
          )
        // systemctl unavailable, timed out, or failing (it exits non-zero when it cannot reach systemd,
        // "System has not been booted with systemd"; a unit that is not installed exits 0 with
        // LoadState=not-found): no verdict this run, memory kept. Reading a failure as "not installed"
        // would resolve a reported NPANotRunning and restart its 15-minute streak.
        if (r === undefined) return [] as Finding[]
        if (r.exitCode !== 0) {
          yield* Effect.logWarning("systemctl show failed; npa not watching this run", {
            error: exitDetail(r)
          })
          return [] as Finding[]
        }
        const step = npaStep(memory, parseUnitState(r.stdout), thresholds, tick.nowMs)
        memory = step.memory
        return step.findings
      })
  }
}
