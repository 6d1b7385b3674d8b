/**
 * Rule engine throughput over a mixed kernel log: mostly benign lines (the usual boot, network, storage,
 * container and audit chatter of a node) with ~1% fault lines. Prints lines/s for
 *   - the matcher alone (literal prefilter + regex on candidates),
 *   - the engine (matcher + occurrence windows + Detection building),
 *   - raw /dev/kmsg record parsing + engine (what the agent does per record),
 *   - a naive loop over every rule regex, for comparison.
 * Median of 9 round-robin passes. Goal: >= 1M lines/s for the engine. Run: node --conditions=source bench/rules-throughput.ts
 */
import { BUILTIN_RULES, compileRules, makeLogRuleEngine } from "../src/rules/index.ts"
import { parseKmsgRecord } from "../src/sources/kmsg-record.ts"
import { mixedKernelLog } from "./mixed-kernel-log.ts"

const LINES = 200_000
const FAULT_RATE = 0.01
const texts = mixedKernelLog(LINES, FAULT_RATE)
/** As the kernel writes record text to /dev/kmsg: bytes < 0x20, >= 0x7f and the backslash as \xNN. */
const escapeKmsg = (text: string) =>
  [...Buffer.from(text, "utf8")]
    .map((b) =>
      b < 0x20 || b >= 0x7f || b === 0x5c ? `\\x${b.toString(16).padStart(2, "0")}` : String.fromCharCode(b)
    )
    .join("")
const records = texts.map((t, i) => `6,${1000 + i},${5_000_000 + i * 10},-;${escapeKmsg(t)}`)
const avgBytes = Math.round(texts.reduce((n, t) => n + t.length, 0) / texts.length)

interface Pass {
  readonly name: string
  readonly run: () => number
  readonly rates: number[]
  hits: number
}
const passes: Pass[] = []
const pass = (name: string, run: () => number) => passes.push({ name, run, rates: [], hits: 0 })

/** Round-robin over the passes, so that load spikes and GC hit every variant alike. */
const measureAll = (rounds: number) => {
  for (const p of passes) p.run() // warm-up (JIT)
  for (let r = 0; r < rounds; r++)
    for (const p of passes) {
      const t0 = process.hrtime.bigint()
      p.hits = p.run()
      p.rates.push(LINES / (Number(process.hrtime.bigint() - t0) / 1e9))
    }
  for (const p of passes) {
    const rates = [...p.rates].sort((a, b) => a - b)
    const median = rates[Math.floor(rates.length / 2)]!
    console.log(
      `${p.name.padEnd(44)} ${(median / 1e6).toFixed(2).padStart(6)} M lines/s  (min ${(rates[0]! / 1e6).toFixed(2)}, max ${(rates.at(-1)! / 1e6).toFixed(2)}; ${p.hits} hits)`
    )
  }
}

console.log(
  `rules-throughput: ${LINES} kernel lines (avg ${avgBytes} bytes, ${(FAULT_RATE * 100).toFixed(0)}% faults), ${BUILTIN_RULES.filter((r) => r.sources.includes("dmesg")).length} dmesg rules, node ${process.version}`
)
const matcher = compileRules()
pass("matcher.match (prefilter + regex)", () => {
  let hits = 0
  for (const t of texts) hits += matcher.match("dmesg", t).length
  return hits
})
pass("engine.process (match + windows + Detection)", () => {
  const engine = makeLogRuleEngine({}, matcher)
  let hits = 0
  for (let i = 0; i < texts.length; i++)
    hits += engine.process({ source: "dmesg", text: texts[i]!, timestampMs: i }).length
  return hits
})
pass("kmsg record parse + engine.process", () => {
  const engine = makeLogRuleEngine({}, matcher)
  let hits = 0
  for (const raw of records) {
    const r = parseKmsgRecord(raw)!
    hits += engine.process({ source: "dmesg", text: r.text, timestampMs: r.usecSinceBoot / 1000 }).length
  }
  return hits
})
const allRegexes = BUILTIN_RULES.filter((r) => r.sources.includes("dmesg")).map((r) => new RegExp(r.pattern))
pass("naive: every rule regex on every line", () => {
  let hits = 0
  for (const t of texts) for (const re of allRegexes) if (re.test(t)) hits++
  return hits
})
measureAll(9)
