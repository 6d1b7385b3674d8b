/**
 * `kubectl nodemend whatif --config controller.yaml history.jsonl [--compare other.yaml] [-o json]`: the repair
 * controller's own decision code over a recorded history (@nodemend/repair-controller/whatif), printed per pool
 * and reason. Reads two files, prints; the replay runs the controller in memory (no cluster). Rendering is pure and tested.
 */
import { readFileSync } from "node:fs"
import {
  type CompareRow,
  compare,
  evidenceText,
  type ParsedHistory,
  parseHistory,
  type PoolReasonRow,
  REPLACE_OVERHEAD_MS,
  readConfigFile,
  replay,
  resultJson,
  summarize,
  type WhatIfResult
} from "@nodemend/repair-controller/whatif"
import { Effect } from "effect"
import { PluginError } from "./errors.ts"
import { renderTable } from "./table.ts"

export interface WhatIfOptions {
  readonly history: string
  readonly config: string
  readonly compare: string | undefined
  readonly json: boolean
  readonly repairDurationMs: number | undefined
  /** Rows of the repair and hold lists in text output. */
  readonly limit: number
}

const time = (ms: number | undefined) =>
  ms === undefined ? "-" : new Date(ms).toISOString().replace(/:\d{2}\.\d{3}Z$/, "Z")

const duration = (ms: number) => {
  const m = Math.round(ms / 60_000)
  return m < 60
    ? `${m}m`
    : m < 48 * 60
      ? `${Math.floor(m / 60)}h${m % 60 > 0 ? `${m % 60}m` : ""}`
      : `${Math.round(m / 60 / 24)}d`
}

const heldCell = (held: Readonly<Record<string, number>>) =>
  Object.keys(held).length === 0
    ? "-"
    : Object.entries(held)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([cause, n]) => `${cause} ${n}`)
        .join(", ")

export const SUMMARY_HEADERS = [
  "POOL",
  "REASON",
  "REPAIRS",
  "FIRST",
  "LAST",
  "HELD",
  "FLAPS<TOL",
  "FLAPS>=TOL",
  "RECOVERED AFTER REPAIR"
]

const repairsCell = (r: PoolReasonRow | undefined) =>
  r === undefined ? "0" : r.wouldRepair > 0 ? `${r.repairs} (dry-run)` : String(r.repairs)

export const summaryRows = (rows: ReadonlyArray<PoolReasonRow>): string[][] =>
  rows.map((r) => [
    r.pool,
    r.reason,
    repairsCell(r),
    time(r.firstRepair),
    time(r.lastRepair),
    heldCell(r.held),
    String(r.flapsBeforeToleration),
    String(r.flapsAfterToleration),
    String(r.recoveredAfterRepair)
  ])

export const LEGEND = [
  "REPAIRS: repairs the policy set would have started (dry-run: the WouldRepair it would have reported).",
  "HELD: nodes due for repair that a gate held, by cause: breaker (the pool's unhealthy share), budget (in-flight",
  "  repairs; queued in the controller's order: rank + wait - backoff), veto (paused, do-not-repair annotation or",
  "  pool), zonal-shift, relapse (repaired nodes of the pool came back with the reason: a relapse hold, see",
  '  "Relapse holds"); a gate added later shows under its name.',
  "FLAPS<TOL: conditions that recovered by themselves within their toleration (nothing to repair).",
  "FLAPS>=TOL: recovered by themselves after their toleration, unrepaired (held, vetoed or dry-run).",
  "RECOVERED AFTER REPAIR: the recording shows the condition clearing after the replay had started the repair."
].join("\n")

/** The text report of one replay. */
export const renderResult = (
  r: WhatIfResult,
  what: { readonly history: string; readonly config: string; readonly repairDuration: string },
  limit: number
): string => {
  const out: string[] = []
  out.push(
    `What-if: ${what.config} over ${what.history}: ${time(r.from)} .. ${time(r.to)} (${duration(r.to - r.from)}), ${r.nodes} nodes, ${r.events} events; repair duration ${what.repairDuration}`
  )
  const rows = summarize(r)
  out.push("")
  out.push(rows.length === 0 ? "No repair, hold or flap." : renderTable(SUMMARY_HEADERS, summaryRows(rows)))
  if (r.repairs.length > 0) {
    out.push("")
    out.push(
      `Repairs it would have started${r.repairs.length > limit ? ` (first ${limit} of ${r.repairs.length}; -o json for all)` : ""}:`
    )
    out.push(
      renderTable(
        ["STARTED", "POOL", "REASON", "NODE", "ACTION", "WAITED PAST TOLERATION"],
        r.repairs
          .slice(0, limit)
          .map((x) => [
            time(x.startedAt),
            x.pool,
            x.reason,
            x.node,
            x.dryRun ? `${x.action} (dry-run)` : x.action,
            x.dueAt === undefined ? "-" : duration(x.startedAt - x.dueAt)
          ])
      )
    )
  }
  if (r.holds.length > 0) {
    out.push("")
    out.push(
      `Held${r.holds.length > limit ? ` (first ${limit} of ${r.holds.length}; -o json for all)` : ""}:`
    )
    out.push(
      renderTable(
        ["FROM", "FOR", "POOL", "REASON", "NODE", "CAUSE", "WHY", "THEN"],
        r.holds
          .slice(0, limit)
          .map((h) => [
            time(h.from),
            duration(h.to - h.from),
            h.pool,
            h.reason,
            h.node,
            h.cause,
            h.detail,
            h.outcome
          ])
      )
    )
  }
  if (r.relapseHolds.length > 0) {
    out.push("")
    out.push(
      `Relapse holds (${r.relapses.length} relapses seen; -o json for each):`,
      renderTable(
        ["FROM", "FOR", "POOL", "REASON", "THEN", "EVIDENCE"],
        r.relapseHolds
          .slice(0, limit)
          .map((h) => [
            time(h.from),
            duration(h.to - h.from),
            h.pool,
            h.reason,
            h.outcome,
            `${h.evidence.length} relapses within ${duration(h.windowMs)} (threshold ${h.threshold}): ${evidenceText(h.evidence, 3)}`
          ])
      )
    )
  }
  if (r.ignored > 0)
    out.push(
      "",
      `${r.ignored} recorded events were about nodes the replay had already replaced (not applied).`
    )
  out.push("", LEGEND)
  return out.join("\n")
}

export const COMPARE_HEADERS = [
  "POOL",
  "REASON",
  "REPAIRS A",
  "REPAIRS B",
  "HELD A",
  "HELD B",
  "FLAPS<TOL A",
  "FLAPS<TOL B",
  "ONLY A",
  "ONLY B"
]

const names = (ns: ReadonlyArray<string>) =>
  ns.length === 0 ? "-" : ns.length <= 3 ? ns.join(",") : `${ns.slice(0, 3).join(",")} +${ns.length - 3}`

export const compareRows = (rows: ReadonlyArray<CompareRow>): string[][] =>
  rows.map((c) => [
    c.pool,
    c.reason,
    repairsCell(c.a),
    repairsCell(c.b),
    heldCell(c.a?.held ?? {}),
    heldCell(c.b?.held ?? {}),
    String(c.a?.flapsBeforeToleration ?? 0),
    String(c.b?.flapsBeforeToleration ?? 0),
    names(c.onlyA),
    names(c.onlyB)
  ])

const readHistory = (path: string): ParsedHistory => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    throw new PluginError(`cannot read history ${path}: ${e instanceof Error ? e.message : String(e)}`)
  }
  return parseHistory(text)
}

const loadConfig = (path: string) =>
  Effect.runPromise(readConfigFile(path)).catch((e: unknown) => {
    throw new PluginError(e instanceof Error ? e.message : String(e))
  })

export const whatifCommand = async (
  opts: WhatIfOptions,
  io: { readonly out: (t: string) => void; readonly err: (t: string) => void }
): Promise<number> => {
  const configA = await loadConfig(opts.config)
  const configB = opts.compare !== undefined ? await loadConfig(opts.compare) : undefined
  const parsed = readHistory(opts.history)
  // Bad lines are named and skipped; every other line is replayed.
  for (const b of parsed.bad.slice(0, 20)) io.err(`error: ${opts.history}:${b.line}: ${b.error}`)
  if (parsed.bad.length > 20) io.err(`error: ... and ${parsed.bad.length - 20} more bad lines`)
  if (parsed.bad.length > 0)
    io.err(`${parsed.bad.length} of ${parsed.lines} lines of ${opts.history} skipped; the rest is replayed`)
  const options = opts.repairDurationMs !== undefined ? { repairDurationMs: opts.repairDurationMs } : {}
  const a = await Effect.runPromise(replay(configA, parsed.events, options))
  const b =
    configB !== undefined ? await Effect.runPromise(replay(configB, parsed.events, options)) : undefined
  const repairDuration = `a replacement joins ${duration(opts.repairDurationMs ?? REPLACE_OVERHEAD_MS)} after it is asked for (Replace), the reboot settle time (Reboot)`
  const skipped = parsed.bad.map((x) => ({ line: x.line, error: x.error }))
  if (opts.json) {
    io.out(
      JSON.stringify(
        b === undefined
          ? { history: opts.history, config: opts.config, skipped, ...resultJson(a) }
          : {
              history: opts.history,
              skipped,
              a: { config: opts.config, ...resultJson(a) },
              b: { config: opts.compare, ...resultJson(b) },
              compare: compare(a, b).map((c) => ({
                pool: c.pool,
                reason: c.reason,
                repairsA: c.a?.repairs ?? 0,
                repairsB: c.b?.repairs ?? 0,
                heldA: c.a?.held ?? {},
                heldB: c.b?.held ?? {},
                onlyA: c.onlyA,
                onlyB: c.onlyB
              }))
            },
        null,
        2
      )
    )
    return 0
  }
  if (b === undefined) {
    io.out(renderResult(a, { history: opts.history, config: opts.config, repairDuration }, opts.limit))
    return 0
  }
  io.out(
    `What-if over ${opts.history}: A = ${opts.config}, B = ${opts.compare}; ${a.nodes} nodes, ${a.events} events, ${time(a.from)} .. ${time(a.to)}; repair duration ${repairDuration}`
  )
  const rows = compare(a, b)
  io.out("")
  io.out(
    rows.length === 0
      ? "Neither would repair, hold or see a flap."
      : renderTable(COMPARE_HEADERS, compareRows(rows))
  )
  io.out("")
  io.out(
    `Total repairs: A ${a.repairs.length}, B ${b.repairs.length}; holds: A ${a.holds.length}, B ${b.holds.length}. ONLY A / ONLY B: nodes one set repairs and the other does not. Each alone: kubectl nodemend whatif --config <file> ${opts.history}`
  )
  return 0
}
