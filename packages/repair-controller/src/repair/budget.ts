/**
 * Every repair ends. A step that fails is retried with exponential backoff at most `retry.maxAttempts` times;
 * an error that says retrying cannot help ends the repair at once; a phase that outlives its deadline ends
 * it too. The outcome is always the record's own `Failed` phase with the reason in `failure`, so a failed
 * repair keeps its taint and its journal entry for an operator (docs/operations.md). Pure.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"

/** What the runner knows about a failed step. */
export interface StepError {
  readonly retryable: boolean
  readonly message: string
}

export type AfterFailure =
  | { readonly _tag: "Retry"; readonly record: RepairRecord; readonly delayMs: number }
  | { readonly _tag: "Fail"; readonly record: RepairRecord }

const iso = (ms: number) => new Date(ms).toISOString()
const ms = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s))

export const failed = (r: RepairRecord, why: string, now: number): RepairRecord => {
  const { retry: _retry, ...rest } = r
  return { ...rest, phase: "Failed", failure: why, finishedAt: iso(now), phaseSince: iso(now) }
}

/** Backoff before attempt `n + 1` after `n` failures: initial x 2^(n-1), capped. */
export const backoffMs = (config: ControllerConfig, failures: number): number =>
  Math.min(
    config.retry.initialBackoffSeconds * 2 ** Math.max(0, failures - 1),
    config.retry.maxBackoffSeconds
  ) * 1000

export const afterFailure = (
  r: RepairRecord,
  error: StepError,
  config: ControllerConfig,
  now: number
): AfterFailure => {
  if (!error.retryable) return { _tag: "Fail", record: failed(r, `${r.phase}: ${error.message}`, now) }
  const count = (r.retry?.count ?? 0) + 1
  if (count >= config.retry.maxAttempts)
    return {
      _tag: "Fail",
      record: failed(r, `${r.phase}: gave up after ${count} attempts: ${error.message}`, now)
    }
  return {
    _tag: "Retry",
    record: { ...r, retry: { count, lastError: error.message.slice(0, 500), at: iso(now) } },
    delayMs: backoffMs(config, count)
  }
}

/** When the current phase must have ended; undefined where the phase bounds itself (reboot, replacement, logs). */
export const phaseDeadline = (r: RepairRecord, config: ControllerConfig): number | undefined => {
  const since = ms(r.phaseSince) ?? ms(r.startedAt)
  if (since === undefined) return undefined
  const t = config.timeouts
  switch (r.phase) {
    case "Tainting":
      return since + t.taintSeconds * 1000
    case "Draining": {
      const deadline = ms(r.drainDeadline)
      return deadline === undefined ? undefined : deadline + t.drainPastDeadlineSeconds * 1000
    }
    case "Terminating":
      return since + t.terminateSeconds * 1000
    case "RemovingNode":
      return since + t.removeNodeSeconds * 1000
    case "Untainting":
      return since + t.untaintSeconds * 1000
    default:
      return undefined
  }
}

/** The record ended as Failed when its phase is past its deadline; undefined while there is time. */
export const overdue = (r: RepairRecord, config: ControllerConfig, now: number): RepairRecord | undefined => {
  const deadline = phaseDeadline(r, config)
  if (deadline === undefined || now < deadline) return undefined
  return failed(r, `${r.phase} did not finish by ${iso(deadline)}`, now)
}
