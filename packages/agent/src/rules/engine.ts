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

/**
 * A copy of `s` that shares no memory with the line it came from. A line is a slice of the decoded read chunk
 * (line-splitter.ts) and a capture group a slice of the line; V8 keeps such a slice as a view of its parent, so
 * a subject or message that still points into the chunk keeps the whole chunk (up to 64 KiB of text) alive for
 * as long as the finding lives: in the findings queue, the Event recorder's queue while it waits on the API
 * server, the occurrence gate's keys, the condition state. Findings are rare next to lines, so the copy is cheap.
 */
export const detach = (s: string): string => Buffer.from(s, "utf8").toString("utf8")

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
      const subject = hit.subject === undefined ? undefined : detach(hit.subject)
      const key = `${hit.reason}\u0000${subject ?? ""}`
      if (hit.resolves) {
        gate.reset(key)
        out.push({
          _tag: "Resolution",
          monitor: hit.entry.monitor,
          reason: hit.reason,
          conditionType: hit.entry.conditionType,
          observedAtMs: record.timestampMs,
          ...(subject !== undefined ? { subject } : {})
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
        message: detach(hit.message),
        observedAtMs: record.timestampMs,
        ...(subject !== undefined ? { subject } : {})
      })
    }
    return out
  }
  return { matcher: m, process }
}
