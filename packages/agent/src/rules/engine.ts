/**
 * The log rule engine: matcher + occurrence gate, turning records into findings (Detections, and
 * Resolutions for lines that say a fault cleared). Exactly this engine
 * runs in the agent and in `nodemend-agent rules check`.
 */
import type { Finding } from "../model.ts"
import { compileRules, type LogMatcher, type OnInvalidRule } from "./compile.ts"
import { makeOccurrenceGate } from "./occurrences.ts"
import type { RuleOverrides } from "./overrides.ts"
import type { LogRecord } from "./rule.ts"

export interface LogRuleEngine {
  readonly matcher: LogMatcher
  /**
   * Findings of one record: Detections (none for benign lines and for matches still below their window)
   * and Resolutions (lines that say a fault cleared).
   */
  readonly process: (record: LogRecord) => readonly Finding[]
}

const NONE: readonly Finding[] = []

export const makeLogRuleEngine = (
  overrides: RuleOverrides = {},
  matcher?: LogMatcher,
  onInvalid?: OnInvalidRule
): LogRuleEngine => {
  const m = matcher ?? compileRules(overrides, undefined, onInvalid)
  const gate = makeOccurrenceGate()
  const process = (record: LogRecord): readonly Finding[] => {
    const matches = m.match(record.source, record.text)
    if (matches.length === 0) return NONE
    const out: Finding[] = []
    for (const hit of matches) {
      const key = `${hit.reason}\u0000${hit.subject ?? ""}`
      if (hit.resolves) {
        gate.reset(key)
        out.push({
          _tag: "Resolution",
          monitor: hit.entry.monitor,
          reason: hit.reason,
          conditionType: hit.entry.conditionType,
          observedAtMs: record.timestampMs,
          ...(hit.subject !== undefined ? { subject: hit.subject } : {})
        })
        continue
      }
      if (!gate.admit(key, record.timestampMs, hit.minOccurrences, hit.windowSeconds)) continue
      out.push({
        _tag: "Detection",
        monitor: hit.entry.monitor,
        reason: hit.reason,
        conditionType: hit.entry.conditionType,
        severity: hit.severity,
        message: hit.message,
        observedAtMs: record.timestampMs,
        ...(hit.subject !== undefined ? { subject: hit.subject } : {})
      })
    }
    return out
  }
  return { matcher: m, process }
}
