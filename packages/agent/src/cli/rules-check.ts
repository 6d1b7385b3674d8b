/**
 * `nodemend-agent rules check --source <dmesg|journal:IDENT|file:PATH|podlogs:NAME> [--config FILE]`
 *
 * Reads log lines on stdin and prints, per line, the reason code(s) the running agent would produce for
 * it (space-separated; `resolves:REASON` for a line that clears a reason), or `-`. It uses the agent's rule engine (same rules, literal prefilter and
 * occurrence windows) and the agent's config (reason overrides, extra rules, disabled monitors), so
 * operators can test their overrides against their own logs. Accepted line shapes:
 *   dmesg:   raw /dev/kmsg records (`6,123,4567,-;text`), `dmesg` output, syslog copies;
 *   journal: `journalctl -o json` lines (MESSAGE, __REALTIME_TIMESTAMP) or `journalctl -o short*` lines;
 *   file/podlogs: the file's lines as they are.
 * For dmesg a line ` KEY=VALUE` is a raw record's dictionary continuation: it prints `-` and a note on stderr
 * naming the line; any other line starting with a space is matched as a message.
 * Exit codes: 0 done, 2 invalid config or rules, 64 usage error.
 */
import { parseArgs } from "node:util"
import { Effect, Result } from "effect"
import { applyOverrides, isMonitorEnabled, reasonOverride } from "../config/overrides.ts"
import { loadConfig } from "../config/load.ts"
import type { AgentConfig } from "../config/schema.ts"
import { ruleOverridesFromConfig } from "../config/rule-overrides.ts"
import type { Finding } from "../model.ts"
import { describeInvalidRule, InvalidRule } from "../rules/compile.ts"
import { type LogRuleEngine, makeLogRuleEngine } from "../rules/engine.ts"
import type { LogRecord, LogSourceId } from "../rules/rule.ts"
import { parseSourceId } from "../rules/source-id.ts"
import { parseKmsgRecord } from "../sources/kmsg-record.ts"
import { lineTimestamp } from "../sources/line-timestamp.ts"

export const RULES_CHECK_USAGE =
  "usage: nodemend-agent rules check --source <dmesg|journal:IDENT|file:PATH|podlogs:NAME> [--config FILE] < lines"

interface Writable {
  write(chunk: string): unknown
}

const KMSG_RECORD = /^\d+,\d+,\d+(?:,[^;]*)?;/
/** A raw record's dictionary continuation, ` KEY=VALUE` (keys as the kernel writes them: SUBSYSTEM, DEVICE). */
const KMSG_DICTIONARY = /^ [A-Z0-9_]+=/
const DMESG_TIME = /^\[\s*(\d+)\.(\d+)\]/
/** `Mar 31 05:03:22 host ident[pid]: message` and `2024-03-31T05:03:22+0000 host ident[pid]: message`. */
const JOURNAL_SHORT =
  /^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) \S+ [^\s:[]+(?:\[\d+\])?: /

/** Turns one input line into the record the agent's reader would have produced, or `undefined` to skip. */
export const recordFromInputLine = (
  source: LogSourceId,
  line: string,
  fallbackMs: number
): LogRecord | undefined => {
  if (source === "dmesg") {
    // A dictionary line belongs to the record before it, as the reader sees it; any other line is a message.
    if (KMSG_DICTIONARY.test(line)) return undefined
    if (KMSG_RECORD.test(line)) {
      const r = parseKmsgRecord(line)
      if (r !== undefined) return { source, text: r.text, timestampMs: Math.floor(r.usecSinceBoot / 1000) }
    }
    const t = DMESG_TIME.exec(line)
    const at = t === null ? fallbackMs : Number(t[1]) * 1000 + Math.floor(Number(`0.${t[2]}`) * 1000)
    return { source, text: line, timestampMs: at }
  }
  if (source.startsWith("journal:")) {
    if (line.startsWith("{")) {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>
        const message = entry.MESSAGE
        const realtime = Number(entry.__REALTIME_TIMESTAMP)
        if (typeof message === "string")
          return {
            source,
            text: message,
            timestampMs: Number.isFinite(realtime) ? Math.floor(realtime / 1000) : fallbackMs
          }
      } catch {
        // not JSON: matched as a plain line below
      }
    }
    const prefix = JOURNAL_SHORT.exec(line)
    if (prefix !== null)
      return { source, text: line.slice(prefix[0].length), timestampMs: lineTimestamp(line, fallbackMs) }
    return { source, text: line, timestampMs: fallbackMs }
  }
  return { source, text: line, timestampMs: lineTimestamp(line, fallbackMs) }
}

/** The finding as the running agent's finding sink would pass it on, or nothing (disabled monitor or reason). */
const asConfigured = (config: AgentConfig, f: Finding): readonly Finding[] => {
  if (f._tag === "Detection") {
    const kept = applyOverrides(config, f)
    return kept === undefined ? [] : [kept]
  }
  if (!isMonitorEnabled(config, f.monitor) || reasonOverride(config, f.monitor, f.reason)?.disabled === true)
    return []
  return [f]
}

export const runRulesCheck = async (
  args: readonly string[],
  stdin: NodeJS.ReadableStream,
  stdout: Writable,
  stderr: Writable = stdout
): Promise<number> => {
  const rest = args[0] === "check" ? args.slice(1) : args
  let values: { source?: string | undefined; config?: string | undefined }
  try {
    values = parseArgs({
      args: [...rest],
      options: { source: { type: "string" }, config: { type: "string" } },
      strict: true,
      allowPositionals: false
    }).values
  } catch (e) {
    stderr.write(`nodemend-agent rules check: ${(e as Error).message}\n${RULES_CHECK_USAGE}\n`)
    return 64
  }
  const parsed = values.source === undefined ? undefined : parseSourceId(values.source)
  if (parsed?._tag !== "Parsed") {
    const why = parsed === undefined ? "--source is required" : `--source: ${parsed.message}`
    stderr.write(`nodemend-agent rules check: ${why}\n${RULES_CHECK_USAGE}\n`)
    return 64
  }
  const source = values.source as LogSourceId
  const loaded = await Effect.runPromise(Effect.result(loadConfig(values.config)))
  if (Result.isFailure(loaded)) {
    stderr.write(`nodemend-agent rules check: ${loaded.failure.message}\n`)
    return 2
  }
  const config = loaded.success
  let engine: LogRuleEngine
  try {
    engine = makeLogRuleEngine(ruleOverridesFromConfig(config))
  } catch (e) {
    if (!(e instanceof InvalidRule)) throw e
    stderr.write(`nodemend-agent rules check: ${describeInvalidRule(e)}\n`)
    return 2
  }
  if (!engine.matcher.sources.includes(source))
    stderr.write(`nodemend-agent rules check: note: no rule reads ${source}; every line prints -\n`)

  // Only this subcommand reads lines from stdin; the agent itself never loads node:readline.
  const lines = process
    .getBuiltinModule("node:readline")
    .createInterface({ input: stdin, crlfDelay: Number.POSITIVE_INFINITY })
  // Raw: a one-shot CLI outside Effect; it stamps the stdin lines 1 ms apart from its start.
  const start = Date.now()
  let n = 0
  for await (const line of lines) {
    const record = recordFromInputLine(source, line, start + n++)
    // Said, not silent: a `-` here means the line was not matched at all.
    if (record === undefined)
      stderr.write(
        `nodemend-agent rules check: line ${n}: skipped, a kmsg dictionary continuation (" KEY=VALUE") of the record before it\n`
      )
    const findings =
      record === undefined ? [] : engine.process(record).flatMap((f) => asConfigured(config, f))
    stdout.write(
      findings.length === 0
        ? "-\n"
        : `${findings.map((f) => (f._tag === "Resolution" ? `resolves:${f.reason}` : f.reason)).join(" ")}\n`
    )
  }
  return 0
}
