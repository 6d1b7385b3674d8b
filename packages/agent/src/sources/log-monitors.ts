/**
 * The log-driven monitors for the runtime: opens every source the rules read (one reader per resource),
 * runs each record through the rule engine as it arrives and offers the findings (Detections and
 * Resolutions) to a bounded queue, exposed as a Stream. Readers live as long as the Scope. A full queue
 * drops the finding, counts it and logs it; nothing is dropped silently.
 */
import { Context, Effect, Layer, Metric, Queue, type Scope, Stream } from "effect"
import type { Detection, Finding } from "../model.ts"
import { InvalidRule } from "../rules/compile.ts"
import { makeLogRuleEngine } from "../rules/engine.ts"
import type { RuleOverrides } from "../rules/overrides.ts"
import type { LogSourceId } from "../rules/rule.ts"
import { type LogHub, type SourceCounters, type SourceStatus, startLogHub } from "./log-hub.ts"
import type { SourceLog } from "./source-log.ts"

/**
 * Prometheus series (read from the counters when scraped): per source, plus dropped findings.
 * Registered for the life of the Scope.
 */
export const LOG_SOURCE_METRICS: Readonly<Record<keyof SourceCounters, Metric.Counter<number>>> = {
  linesRead: Metric.counter("nodemend_agent_log_lines_read_total", {
    description: "Log lines read, per source"
  }),
  linesTruncated: Metric.counter("nodemend_agent_log_lines_truncated_total", {
    description: "Log lines longer than the line bound, delivered cut, per source"
  }),
  bytesRead: Metric.counter("nodemend_agent_log_bytes_read_total", {
    description: "Log bytes read, per source (the journal's: journalctl's JSON, on its first source)"
  }),
  malformed: Metric.counter("nodemend_agent_log_malformed_records_total", {
    description: "Records that could not be parsed (kmsg header, journal JSON), per source"
  }),
  kmsgSequenceGaps: Metric.counter("nodemend_agent_kmsg_sequence_gaps_total", {
    description: "Kernel log records lost before they were read (sequence gaps, EPIPE)"
  })
}
export const FINDINGS_DROPPED = Metric.counter("nodemend_agent_log_findings_dropped_total", {
  description: "Log findings (Detections, Resolutions) dropped because the findings queue was full"
})

export interface LogMonitorsOptions {
  /** Bound of the Detection queue (default 4096). */
  readonly capacity?: number
  readonly journalctl?: string
  readonly kmsgLookbackMs?: number
  /** Also called synchronously for every Detection (before it is queued). */
  readonly onDetection?: (detection: Detection) => void
  /** Also called synchronously for every finding, Detections and Resolutions (before it is queued). */
  readonly onFinding?: (finding: Finding) => void
}

export interface LogMetrics {
  readonly linesRead: number
  readonly linesTruncated: number
  readonly bytesRead: number
  readonly malformed: number
  readonly kmsgSequenceGaps: number
  readonly detections: number
  readonly resolutions: number
  readonly findingsDropped: number
  readonly bySource: Readonly<Partial<Record<LogSourceId, Readonly<SourceCounters>>>>
}

export interface LogMonitors {
  /** Detections and Resolutions (a log line that says a fault cleared), in arrival order. */
  readonly findings: Stream.Stream<Finding>
  /** @deprecated The same stream as `findings` (one queue: consume one of them). */
  readonly detections: Stream.Stream<Finding>
  readonly metrics: () => LogMetrics
  /** Per source: watching, or not watching (journalctl or the file's directory missing, ...). */
  readonly status: () => Readonly<Partial<Record<LogSourceId, SourceStatus>>>
  /** The shared readers, for other subscribers of raw lines. */
  readonly hub: LogHub
}

export const makeLogMonitors = (
  hostRoot: string,
  overrides: RuleOverrides = {},
  options: LogMonitorsOptions = {}
): Effect.Effect<LogMonitors, InvalidRule, Scope.Scope> =>
  Effect.gen(function* () {
    // A rule or override of the operator's that cannot run is logged and left out; every other rule runs.
    const invalid: InvalidRule[] = []
    const engine = yield* Effect.try({
      try: () => makeLogRuleEngine(overrides, undefined, (e) => invalid.push(e)),
      catch: (e) => (e instanceof InvalidRule ? e : new InvalidRule({ ruleId: "?", message: String(e) }))
    })
    for (const e of invalid)
      yield* Effect.logError("invalid log rule left out", {
        rule: e.ruleId,
        ...(e.field !== undefined ? { field: e.field } : {}),
        error: e.message
      }).pipe(Effect.annotateLogs("component", "log-sources"))
    const context = yield* Effect.context<never>()
    const runLog = Effect.runForkWith(context)
    const log: SourceLog = (level, message, fields = {}) => {
      const effect =
        level === "error"
          ? Effect.logError(message, fields)
          : level === "warn"
            ? Effect.logWarning(message, fields)
            : Effect.logInfo(message, fields)
      runLog(effect.pipe(Effect.annotateLogs("component", "log-sources")))
    }
    const queue = yield* Queue.bounded<Finding>(options.capacity ?? 4096)
    let detections = 0
    let resolutions = 0
    let findingsDropped = 0
    let lastDropLog = Number.NEGATIVE_INFINITY
    const hub = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startLogHub({
          hostRoot,
          sources: engine.matcher.sources,
          log,
          ...(options.journalctl !== undefined ? { journalctl: options.journalctl } : {}),
          ...(options.kmsgLookbackMs !== undefined ? { kmsgLookbackMs: options.kmsgLookbackMs } : {})
        })
      ),
      (h) => Effect.promise(() => h.stop())
    )
    for (const source of hub.sources) {
      hub.subscribe(source, (record) => {
        for (const f of engine.process(record)) {
          if (f._tag === "Detection") {
            detections++
            options.onDetection?.(f)
          } else resolutions++
          options.onFinding?.(f)
          if (!Queue.offerUnsafe(queue, f)) {
            findingsDropped++
            // Counted every time; logged at most once a second.
            const t = Date.now()
            if (t - lastDropLog >= 1000) {
              lastDropLog = t
              log("error", "log findings queue full; finding dropped", {
                finding: f._tag,
                reason: f.reason,
                subject: f.subject,
                findingsDropped
              })
            }
          }
        }
      })
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const registrations = [
          Metric.registerUnsafe(FINDINGS_DROPPED, context, {
            get: () => ({ count: findingsDropped, incremental: true }),
            update: () => undefined,
            modify: () => undefined
          })
        ]
        for (const source of hub.sources)
          for (const [key, counter] of Object.entries(LOG_SOURCE_METRICS) as [
            keyof SourceCounters,
            Metric.Counter<number>
          ][])
            registrations.push(
              Metric.registerUnsafe(Metric.withAttributes(counter, { source }), context, {
                get: () => ({ count: hub.counters()[source]?.[key] ?? 0, incremental: true }),
                update: () => undefined,
                modify: () => undefined
              })
            )
        return registrations
      }),
      (registrations) =>
        Effect.sync(() => {
          for (const r of registrations) r.remove()
        })
    )
    const metrics = (): LogMetrics => {
      const bySource = hub.counters()
      const sum = (k: keyof SourceCounters) => Object.values(bySource).reduce((n, c) => n + (c?.[k] ?? 0), 0)
      return {
        linesRead: sum("linesRead"),
        linesTruncated: sum("linesTruncated"),
        bytesRead: sum("bytesRead"),
        malformed: sum("malformed"),
        kmsgSequenceGaps: sum("kmsgSequenceGaps"),
        detections,
        resolutions,
        findingsDropped,
        bySource
      }
    }
    const findings = Stream.fromQueue(queue)
    return { findings, detections: findings, metrics, status: hub.status, hub }
  })

/** The log monitors as a service, for composition in the binary's main. */
export class LogMonitorsService extends Context.Service<LogMonitorsService, LogMonitors>()(
  "nodemend/agent/LogMonitors"
) {
  static readonly layer = (
    hostRoot: string,
    overrides: RuleOverrides = {},
    options: LogMonitorsOptions = {}
  ): Layer.Layer<LogMonitorsService, InvalidRule> =>
    Layer.effect(LogMonitorsService, makeLogMonitors(hostRoot, overrides, options))
}
