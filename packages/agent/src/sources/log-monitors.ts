/**
 * The log-driven monitors for the runtime: opens every source the rules read (one reader per resource),
 * runs each record through the rule engine as it arrives and hands the findings (Detections and Resolutions)
 * to the finding lanes (finding-lanes.ts), exposed as a Stream. Each finding is judged news or a repeat there,
 * before anything is bounded: news (a reason not reported for a minute, every Resolution that changes its key)
 * is always kept; repeats wait in their source's bounded lane, and a full lane sheds them, counted per source
 * and reason (`nodemend_agent_log_findings_shed_total`) and named by the shed-findings Event. Readers live as
 * long as the Scope.
 */
import { Clock, Context, Effect, Layer, Metric, Queue, type Scope, Stream } from "effect"
import type { Detection, Finding } from "../model.ts"
import { InvalidRule } from "../rules/compile.ts"
import { makeLogRuleEngine } from "../rules/engine.ts"
import type { RuleOverrides } from "../rules/overrides.ts"
import type { LogSourceId } from "../rules/rule.ts"
import { makeFindingLanes, REPEATS_PER_SOURCE } from "./finding-lanes.ts"
import { type LogHub, type SourceCounters, type SourceStatus, startLogHub } from "./log-hub.ts"
import { UnknownLogReader } from "./log-readers.ts"
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
  description:
    "Log findings shed that were not tracked as news (a reason or subject beyond the tracked bounds): possibly a first occurrence"
})
export const FINDINGS_SHED = Metric.counter("nodemend_agent_log_findings_shed_total", {
  description:
    "Repeated log findings shed in a storm (their source's lane was full, or a newer one superseded them), per source and reason"
})
/** Findings handed to the sink at once (the sink runs once per batch). */
const TAKE_BATCH = 512

export interface LogMonitorsOptions {
  /** Bound of each source's lane of repeats (default 1024); news is never bounded by it. */
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
  /** Shed findings that were not tracked as news (see FINDINGS_DROPPED). */
  readonly findingsDropped: number
  /** Repeats shed, all sources and reasons. */
  readonly findingsShed: number
  readonly bySource: Readonly<Partial<Record<LogSourceId, Readonly<SourceCounters>>>>
}

export interface ShedReport {
  readonly source: LogSourceId
  readonly monitor: string
  readonly reason: string
  readonly count: number
}

export interface LogMonitors {
  /** Detections and Resolutions (a log line that says a fault cleared), in arrival order. */
  readonly findings: Stream.Stream<Finding>
  /** @deprecated The same stream as `findings` (one queue: consume one of them). */
  readonly detections: Stream.Stream<Finding>
  readonly metrics: () => LogMetrics
  /** Per source: watching, or not watching (journalctl or the file's directory missing, ...). */
  readonly status: () => Readonly<Partial<Record<LogSourceId, SourceStatus>>>
  /** Per source and reason, what was shed since the last call, most first (for the shed-findings Event). */
  readonly drainShed: () => readonly ShedReport[]
  /** The shared readers, for other subscribers of raw lines. */
  readonly hub: LogHub
}

export const makeLogMonitors = (
  hostRoot: string,
  overrides: RuleOverrides = {},
  options: LogMonitorsOptions = {}
): Effect.Effect<LogMonitors, InvalidRule | UnknownLogReader, Scope.Scope> =>
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
    const clock = yield* Clock.Clock
    const lanes = makeFindingLanes({ repeatsPerSource: options.capacity ?? REPEATS_PER_SOURCE })
    // Wakes the Stream's pull when findings arrive; one pending signal is enough.
    const wake = yield* Queue.sliding<void>(1)
    const shedRegistrations = new Map<string, { remove: () => void }>()
    let detections = 0
    let resolutions = 0
    let lastShedLog = Number.NEGATIVE_INFINITY
    /** A (source, reason) that sheds for the first time gets its Prometheus series. */
    const registerShed = () => {
      for (const c of lanes.shed()) {
        const key = `${c.source}\u0000${c.reason}`
        if (shedRegistrations.has(key)) continue
        shedRegistrations.set(
          key,
          Metric.registerUnsafe(
            Metric.withAttributes(FINDINGS_SHED, { source: c.source, monitor: c.monitor, reason: c.reason }),
            context,
            {
              get: () => ({ count: c.count, incremental: true }),
              update: () => undefined,
              modify: () => undefined
            }
          )
        )
      }
    }
    const shed = (source: LogSourceId, f: Finding, now: number) => {
      if (shedRegistrations.size < lanes.shedPairs()) registerShed()
      // Counted every time; logged at most once a minute (the Event names every storm's count).
      if (now - lastShedLog < 60_000) return
      lastShedLog = now
      log("warn", "log storm: repeated findings shed (news and resolutions are kept)", {
        source,
        reason: f.reason,
        findingsShed: lanes.shedTotal()
      })
    }
    const hub = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          startLogHub({
            hostRoot,
            sources: engine.matcher.sources,
            log,
            // The readers' time (a line without its own, the journal's start, the cut-line log) is the Clock's.
            now: () => clock.currentTimeMillisUnsafe(),
            ...(options.journalctl !== undefined ? { journalctl: options.journalctl } : {}),
            ...(options.kmsgLookbackMs !== undefined ? { kmsgLookbackMs: options.kmsgLookbackMs } : {})
          }),
        // A source naming no registered reader stops the start; anything else a reader throws is a defect.
        catch: (e) => e
      }).pipe(Effect.catch((e) => (e instanceof UnknownLogReader ? Effect.fail(e) : Effect.die(e)))),
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
          const now = clock.currentTimeMillisUnsafe()
          const verdict = lanes.offer(source, f, now)
          if (verdict === "shed") shed(source, f, now)
          else Queue.offerUnsafe(wake, undefined)
        }
      })
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const registrations = [
          Metric.registerUnsafe(FINDINGS_DROPPED, context, {
            get: () => ({ count: lanes.untrackedShed(), incremental: true }),
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
          for (const r of shedRegistrations.values()) r.remove()
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
        findingsDropped: lanes.untrackedShed(),
        findingsShed: lanes.shedTotal(),
        bySource
      }
    }
    // News first, then each source's repeats in turn (finding-lanes.ts); waits for a wake when all are empty.
    const pull = Effect.gen(function* () {
      for (;;) {
        const batch = lanes.take(TAKE_BATCH)
        if (batch.length > 0) return batch as unknown as readonly [Finding, ...Finding[]]
        yield* Queue.take(wake)
      }
    })
    const findings = Stream.fromPull(Effect.succeed(pull))
    return { findings, detections: findings, metrics, status: hub.status, drainShed: lanes.drainShed, hub }
  })

/** The log monitors as a service, for composition in the binary's main. */
export class LogMonitorsService extends Context.Service<LogMonitorsService, LogMonitors>()(
  "nodemend/agent/LogMonitors"
) {
  static readonly layer = (
    hostRoot: string,
    overrides: RuleOverrides = {},
    options: LogMonitorsOptions = {}
  ): Layer.Layer<LogMonitorsService, InvalidRule | UnknownLogReader> =>
    Layer.effect(LogMonitorsService, makeLogMonitors(hostRoot, overrides, options))
}
