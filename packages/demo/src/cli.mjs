/**
 * `nodemend`: the demo's command line. `start` (what `npm start` runs), `scenario` (`npm run demo:scenario`)
 * and `inject`, which writes a fault into a running demo node's simulated host the way the real source writes
 * it; the agent on that node detects it. Nothing here writes a condition.
 */
import { parseArgs } from "node:util"
import { DEMO_DIR, readFleetState } from "./state.mjs"
import { describeOutcome, describeWhere, FAULTS, faultNamed, writeFault } from "./faults.mjs"

const USAGE = `usage: nodemend <command>

  start                     the demo: two pools on a local control plane and the fake cloud, one agent per
                            node, the repair controller, a live view (npm start)
  scenario                  the scripted story; exits non-zero if a step does not happen (npm run demo:scenario)
  inject NODE FAULT         write FAULT into NODE's simulated host while the demo runs (NODE: a name or a
                            unique part of one)
  inject --list             the faults it can inject, where each is written, what the agent makes of it
                            (dcgm-* only on GPU nodes: their agents load the DCGM test double)
  --help                    this text`

const fail = (msg) => {
  process.stderr.write(`nodemend: ${msg}\n`)
  process.exit(2)
}

const list = () => {
  const rows = FAULTS.map((f) => [f.name, describeWhere(f.where), describeOutcome(f), f.summary])
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)))
  process.stdout.write(
    `${rows.map((r) => `${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`).join("\n")}\n`
  )
}

const inject = (nodeArg, faultArg) => {
  const fault =
    faultNamed(faultArg ?? "") ??
    fail(`unknown fault ${JSON.stringify(faultArg)} (see: nodemend inject --list)`)
  const state = readFleetState()
  if (!state || state.stoppedAt) fail(`no demo running (${DEMO_DIR}/fleet.json): start it with npm start`)
  const names = Object.keys(state.hosts)
  const hits = names.includes(nodeArg) ? [nodeArg] : names.filter((n) => n.includes(nodeArg ?? "\0"))
  if (hits.length !== 1)
    fail(
      hits.length === 0
        ? `no demo node matches ${JSON.stringify(nodeArg)}; nodes: ${names.join(", ")}`
        : `${JSON.stringify(nodeArg)} matches ${hits.length} nodes: ${hits.join(", ")}`
    )
  try {
    writeFault(state.hosts[hits[0]], fault)
  } catch (e) {
    fail(`${hits[0]}: ${fault.name} not written: ${e?.message ?? e}`)
  }
  process.stdout.write(
    `${hits[0]}: wrote ${fault.name} to ${describeWhere(fault.where)}; the agent should report ${describeOutcome(fault)}\n`
  )
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { help: { type: "boolean", short: "h" }, list: { type: "boolean" } }
})
const [command, ...rest] = positionals
if (values.help || command === undefined) process.stdout.write(`${USAGE}\n`)
else if (command === "inject") values.list ? list() : inject(rest[0], rest[1])
else if (command === "start" || command === "scenario") {
  // The system tools the demo runs (cc, openssl, systemd-journal-remote, journalctl, Go): checked, and installed
  // as root on Debian, before anything is built.
  const { ensurePrereqs } = await import("../../../tools/prereqs.mjs")
  ensurePrereqs(["demo"], { entry: command === "start" ? "npm start" : "npm run demo:scenario" })
  if (command === "start") await (await import("./live.mjs")).live()
  else await import("./scenario.mjs")
} else fail(`unknown command ${JSON.stringify(command)}\n${USAGE}`)
