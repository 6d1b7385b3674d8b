/**
 * Replays a history (default: a fresh synthetic week of 5,000 nodes from generate.ts) under the shipped controller
 * config and under a second policy set, and prints the wall time of each step and the machine's load. The goal
 * (issue #28): a week of 5,000 nodes in under 30 s. Figures go to docs/performance.md.
 *
 *   node --conditions=source bench/whatif/replay.ts [history.jsonl] [--config deploy/controller/config.yaml]
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import {
  compare,
  parseHistory,
  readConfigFile,
  replay,
  resultJson,
  summarize
} from "@nodemend/repair-controller/whatif"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { config: { type: "string" } }
})
const history = positionals[0] ?? "/tmp/whatif-week.jsonl"
if (positionals[0] === undefined)
  execFileSync(
    process.execPath,
    ["--conditions=source", new URL("generate.ts", import.meta.url).pathname, history],
    {
      stdio: "inherit"
    }
  )
const configPath =
  values.config ?? (existsSync("bench/whatif/controller.yaml") ? "bench/whatif/controller.yaml" : undefined)
const config = await Effect.runPromise(
  configPath !== undefined ? readConfigFile(configPath) : Effect.die("no config: pass --config")
)
const stricter = { ...config, maxInFlight: "1", maxUnhealthyPercent: 10 }

const ms = (t: bigint) => Number(t / 1_000_000n)
const t0 = process.hrtime.bigint()
const text = readFileSync(history, "utf8")
const t1 = process.hrtime.bigint()
const parsed = parseHistory(text)
const t2 = process.hrtime.bigint()
const a = await Effect.runPromise(replay(config, parsed.events))
const t3 = process.hrtime.bigint()
const rows = summarize(a)
JSON.stringify(resultJson(a))
const t4 = process.hrtime.bigint()
const b = await Effect.runPromise(replay(stricter, parsed.events))
compare(a, b)
const t5 = process.hrtime.bigint()

const load = loadavg().map((x) => x.toFixed(2))
console.log(
  `history ${history}: ${parsed.lines} lines (${parsed.bad.length} bad), ${a.nodes} nodes, ${((a.to - a.from) / 86_400_000).toFixed(1)} days`
)
console.log(`config ${configPath}; compare: the same with maxInFlight 1, maxUnhealthyPercent 10`)
console.log(
  `read ${ms(t1 - t0)} ms, parse ${ms(t2 - t1)} ms, replay ${ms(t3 - t2)} ms, summary+json ${ms(t4 - t3)} ms, second replay+compare ${ms(t5 - t4)} ms`
)
console.log(
  `whatif (read, parse, replay, report): ${(ms(t4 - t0) / 1000).toFixed(2)} s; with --compare: ${(ms(t5 - t0) / 1000).toFixed(2)} s`
)
console.log(
  `repairs ${a.repairs.length} (compare: ${b.repairs.length}), holds ${a.holds.length} (${b.holds.length}), flaps ${a.flaps.length}, rows ${rows.length}`
)
for (const r of rows.filter((x) => x.repairs > 0 || Object.keys(x.held).length > 0).slice(0, 12))
  console.log(
    `  ${r.pool} ${r.reason}: repairs ${r.repairs}, held ${JSON.stringify(r.held)}, flaps<tol ${r.flapsBeforeToleration}, >=tol ${r.flapsAfterToleration}`
  )
console.log(
  `machine: ${cpus().length} cpus (${cpus()[0]?.model ?? "?"}), load average ${load.join(" ")}, node ${process.version}`
)
