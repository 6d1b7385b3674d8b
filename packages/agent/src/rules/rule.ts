/**
 * Log rules: the data shape (`UserRule`, overrides.ts; built-ins narrowed to `BuiltinRule`) and the form the
 * compiler builds from it (`LogRule`). The engine compiles rules once (compile.ts) and gates them by occurrences
 * (occurrences.ts).
 */
import type { CatalogCode, ReasonCode } from "@nodemend/reason-codes"
import type { UserRule } from "./overrides.ts"
import type { LogSourceId } from "./source-id.ts"

export type { LogSourceId } from "./source-id.ts"

/** A catalog key (`SoftLockup`, `NvidiaXID{code}Error`) or an exact reason (`NvidiaXID79Error`). */
export type CatalogReason = CatalogCode | ReasonCode

/**
 * A built-in rule: a `UserRule` whose reasons are checked against the catalog by the typechecker (a misspelled
 * reason fails `tsc`) and whose sources are typed.
 */
export interface BuiltinRule extends Omit<UserRule, "reason" | "reasonByGroup" | "sources"> {
  readonly sources: readonly LogSourceId[]
  readonly reason: CatalogReason
  readonly reasonByGroup?: {
    readonly group: string
    readonly reasons: Readonly<Record<string, CatalogReason>>
  }
}

/** A rule as the compiler builds it from the data (compile.ts). */
export interface LogRule {
  /** Stable identifier, used by overrides and in logs (`kernel.soft-lockup`). */
  readonly id: string
  readonly sources: readonly LogSourceId[]
  /** The catalog key of the rule's (default) reason; its monitor is the rule's monitor. */
  readonly code: CatalogCode
  /** Builds the exact reason from the named groups; absent when the reason is `code` itself. */
  readonly reasonOf?: (groups: Readonly<Record<string, string>>) => string | undefined
  /**
   * Literal substrings of which at least one occurs in every line the pattern matches. The matcher
   * runs the regex only on lines that contain one of them (the prefilter).
   */
  readonly literals: readonly string[]
  /** Unanchored; named groups fill `{placeholders}` of the message and subject. */
  readonly pattern: RegExp
  /** Message template; defaults to the catalog message. `{line}` is the whole line. */
  readonly message?: string
  /** Subject template (device, pod, PCI bus id...); also keys the occurrence window. */
  readonly subject?: string
  /** Replaces the catalog's severity for this rule's matches. */
  readonly severity?: "Condition" | "Event"
  /** Fire only when this many matches of the same (reason, subject) fall within `windowSeconds`. */
  readonly minOccurrences?: number
  readonly windowSeconds?: number
  /**
   * Fires alongside the monitor's first match instead of competing with it: a rule that counts the lines of an
   * Event rule of the same monitor and escalates a run of them to a Condition (10 corrected memory errors on
   * one DIMM in 24 h are MemoryErrorCorrectedRepeatedly; each one is still a MemoryErrorCorrected Event).
   */
  readonly alongside?: boolean
  /**
   * The line says the fault cleared (recovery `auto`): emit a Resolution of the reason for the subject
   * instead of a Detection, and start its occurrence window over.
   */
  readonly resolves?: boolean
}

/** One line from a source, with the time it was written at the source (ms since epoch). */
export interface LogRecord {
  readonly source: LogSourceId
  readonly text: string
  readonly timestampMs: number
}
