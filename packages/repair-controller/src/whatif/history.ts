/**
 * The history format `kubectl nodemend record` writes and `kubectl nodemend whatif` replays: JSON lines, one event
 * per line, each carrying the format version `v`. Documented in docs/operations.md ("What-if replay"); the JSON
 * Schema is `historyJsonSchema()` (`kubectl nodemend whatif --print-schema`). Other tools may write it too.
 *
 * - `node`: a node exists (first seen, or its pool, zone or do-not-repair annotation changed).
 * - `condition`: a condition of a node changed status or reason. `at` is the condition's lastTransitionTime when it
 *   changed status (the toleration counts from it), else when the change was seen.
 * - `deleted`: the Node object is gone.
 * - `nodepool`: a Karpenter NodePool's facts changed (its NodeClaims, the do-not-repair annotation, its disruption
 *   budgets), or it is gone (`deleted: true`). A pool without such a line is not a Karpenter NodePool.
 * - `mark`: the recording started or ended (`end` lets the replay run its clock to the end of the recording).
 * - `scheduledEvent`: the cloud's scheduled event of a node's machine (EC2 DescribeInstanceStatus `Events`), as
 *   the cloud answered at `at`: announced, changed, or ended (`state` completed or canceled). The replay plans it
 *   as the controller does (decide/scheduledEvents.ts, ADR 0018).
 *
 * Pure: parsing a file's text gives the events and, for every bad line, its number and why; a bad line loses
 * nothing else.
 */
import { Result, Schema, SchemaIssue } from "effect"

export const HISTORY_VERSION = 1

const Time = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/u)
).annotate({ description: "RFC 3339 time, e.g. 2026-12-01T08:00:00Z" })
const Name = Schema.String.check(Schema.isNonEmpty())
const V = Schema.Literal(HISTORY_VERSION)

export const NodeLine = Schema.Struct({
  v: V,
  kind: Schema.Literal("node"),
  at: Time,
  node: Name,
  /** The node's pool (the value of the recorder's pool label); absent: no pool (the cluster scope). */
  pool: Schema.optionalKey(Schema.String),
  /** topology.kubernetes.io/zone. */
  zone: Schema.optionalKey(Schema.String),
  /** The node carries nodemend.io/do-not-repair=true. */
  doNotRepair: Schema.optionalKey(Schema.Boolean)
})

export const ConditionLine = Schema.Struct({
  v: V,
  kind: Schema.Literal("condition"),
  at: Time,
  node: Name,
  pool: Schema.optionalKey(Schema.String),
  zone: Schema.optionalKey(Schema.String),
  type: Name,
  status: Schema.Literals(["True", "False", "Unknown"]),
  reason: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String)
})

export const DeletedLine = Schema.Struct({ v: V, kind: Schema.Literal("deleted"), at: Time, node: Name })

export const NodePoolLine = Schema.Struct({
  v: V,
  kind: Schema.Literal("nodepool"),
  at: Time,
  /** The NodePool's name: the pool of the nodes labelled with it. */
  pool: Name,
  /** Its NodeClaims, registered or not (they size the pool, as Karpenter counts it). */
  claims: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  /** The NodePool carries nodemend.io/do-not-repair=true. */
  doNotRepair: Schema.optionalKey(Schema.Boolean),
  /** `spec.disruption.budgets` as written. */
  budgets: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        nodes: Schema.String,
        reasons: Schema.optionalKey(Schema.Array(Schema.String)),
        schedule: Schema.optionalKey(Schema.String),
        duration: Schema.optionalKey(Schema.String)
      })
    )
  ),
  /** The NodePool is gone. */
  deleted: Schema.optionalKey(Schema.Boolean)
})

export const MarkLine = Schema.Struct({
  v: V,
  kind: Schema.Literal("mark"),
  at: Time,
  mark: Schema.Literals(["start", "end"]),
  /** Free text: the tool, the cluster, the pool label it recorded. */
  note: Schema.optionalKey(Schema.String)
})

export const SCHEDULED_EVENT_CODES = [
  "instance-retirement",
  "instance-stop",
  "system-reboot",
  "instance-reboot",
  "system-maintenance"
] as const

export const ScheduledEventLine = Schema.Struct({
  v: V,
  kind: Schema.Literal("scheduledEvent"),
  at: Time,
  node: Name,
  pool: Schema.optionalKey(Schema.String),
  zone: Schema.optionalKey(Schema.String),
  /** The event's id (`instance-event-...`): a later line with the same id updates it. */
  id: Name,
  code: Schema.Literals(SCHEDULED_EVENT_CODES),
  notBefore: Time,
  notAfter: Schema.optionalKey(Time),
  /** Absent: scheduled. `completed` or `canceled`: ended, it plans nothing. */
  state: Schema.optionalKey(Schema.Literals(["scheduled", "completed", "canceled"])),
  description: Schema.optionalKey(Schema.String)
})

export const HistoryLine = Schema.Union([
  NodeLine,
  ConditionLine,
  DeletedLine,
  NodePoolLine,
  MarkLine,
  ScheduledEventLine
])
export type HistoryLine = typeof HistoryLine.Type

/** A decoded line with its time as epoch ms and its line number (1-based) in the file. */
export type HistoryEvent = HistoryLine & { readonly atMs: number; readonly line: number }

export interface BadLine {
  readonly line: number
  readonly error: string
}

export interface ParsedHistory {
  /** In time order (stable: lines with the same time keep the file's order). */
  readonly events: ReadonlyArray<HistoryEvent>
  readonly bad: ReadonlyArray<BadLine>
  readonly lines: number
}

type Decoder = (
  raw: unknown,
  options: { readonly errors: "all" }
) => Result.Result<HistoryLine, Schema.SchemaError>
/** One decoder per kind: a line is checked against its own kind only, so its error names its own fields. */
const decoders: Readonly<
  Record<"node" | "condition" | "deleted" | "nodepool" | "mark" | "scheduledEvent", Decoder>
> = {
  node: Schema.decodeUnknownResult(NodeLine),
  condition: Schema.decodeUnknownResult(ConditionLine),
  deleted: Schema.decodeUnknownResult(DeletedLine),
  nodepool: Schema.decodeUnknownResult(NodePoolLine),
  mark: Schema.decodeUnknownResult(MarkLine),
  scheduledEvent: Schema.decodeUnknownResult(ScheduledEventLine)
}
const KINDS = Object.keys(decoders) as ReadonlyArray<keyof typeof decoders>
const isKind = (k: unknown): k is keyof typeof decoders => KINDS.includes(k as keyof typeof decoders)
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const issueText = (issue: SchemaIssue.Issue): string =>
  formatIssues(issue)
    .issues.map((i) => {
      const path = (i.path ?? []).map((p) => (typeof p === "object" ? String(p.key) : String(p))).join(".")
      return path === "" ? i.message : `${path}: ${i.message}`
    })
    .join("; ")

/** A scheduled event's window that is no time span: why, else undefined. */
const badWindow = (e: typeof ScheduledEventLine.Type): string | undefined => {
  const from = Date.parse(e.notBefore)
  if (!Number.isFinite(from)) return `notBefore: not a valid time: ${e.notBefore}`
  if (e.notAfter === undefined) return undefined
  const to = Date.parse(e.notAfter)
  if (!Number.isFinite(to)) return `notAfter: not a valid time: ${e.notAfter}`
  return to < from ? `notAfter: ${e.notAfter} is before notBefore ${e.notBefore}` : undefined
}

/** One line's event, or why it is bad. Blank lines are neither (undefined). */
export const parseHistoryLine = (text: string, line: number): HistoryEvent | BadLine | undefined => {
  if (text.trim() === "") return undefined
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (e) {
    return { line, error: `not JSON: ${e instanceof Error ? e.message : String(e)}` }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { line, error: "not a JSON object" }
  if ("v" in raw && raw.v !== HISTORY_VERSION)
    return {
      line,
      error: `format version ${JSON.stringify(raw.v)} is not supported (this replay reads v${HISTORY_VERSION})`
    }
  const kind = "kind" in raw ? raw.kind : undefined
  if (!isKind(kind))
    return {
      line,
      error: `kind: expected one of ${KINDS.join(", ")}, got ${JSON.stringify(kind) ?? "nothing"}`
    }
  const r = decoders[kind](raw, { errors: "all" })
  if (Result.isFailure(r)) return { line, error: issueText(r.failure.issue) }
  const atMs = Date.parse(r.success.at)
  if (!Number.isFinite(atMs)) return { line, error: `at: not a valid time: ${r.success.at}` }
  if (r.success.kind === "scheduledEvent") {
    const bad = badWindow(r.success)
    if (bad !== undefined) return { line, error: bad }
  }
  return { ...r.success, atMs, line }
}

/** Every event of a history file's text, in time order, and every bad line with its number. */
export const parseHistory = (text: string): ParsedHistory => {
  const events: HistoryEvent[] = []
  const bad: BadLine[] = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const r = parseHistoryLine(lines[i]!, i + 1)
    if (r === undefined) continue
    if ("error" in r) bad.push(r)
    else events.push(r)
  }
  // Array.prototype.sort is stable: equal times keep the file's order.
  events.sort((a, b) => a.atMs - b.atMs)
  const last = lines.at(-1) === "" ? lines.length - 1 : lines.length
  return { events, bad, lines: last }
}

/** One line of the format, as a writer produces it (no trailing newline). */
export const historyLine = (l: HistoryLine): string => JSON.stringify(l)

/** The format as a JSON Schema (draft 2020-12) document, for tools that write histories. */
export const historyJsonSchema = (): unknown => Schema.toJsonSchemaDocument(HistoryLine)

/** RFC 3339 without milliseconds when they are zero. */
export const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.000Z$/, "Z")
