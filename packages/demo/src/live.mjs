/**
 * `npm start`: the fleet (fleet.mjs) and the live view (view.mjs), redrawn in place once a second on a
 * terminal; on anything else (a pipe, CI) plain lines: each new controller Event, and the view every 15 s.
 * Ctrl-C (or SIGTERM) stops every process it started and the cluster if it started it.
 */
import { startFleet } from "./fleet.mjs"
import { takeSnapshot } from "./snapshot.mjs"
import { render, safe } from "./view.mjs"

const HINT =
  "inject a fault: npx nodemend inject <node> xid79   (npx nodemend inject --list)   ·   Ctrl-C stops everything"

export const live = async () => {
  const t0 = Date.now()
  const tty = process.stdout.isTTY === true
  const say = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`)
  let fleet
  let stopping = false
  const onSignal = () => {
    stopping = true
    if (tty) process.stdout.write("\x1b[?25h\n")
    console.log("stopping: agents, controller, fake cloud ... (logs stay in .nodemend/demo/logs)")
  }
  try {
    fleet = await startFleet({ say, onSignal })
  } catch (e) {
    console.error(`demo failed to start: ${e?.stack ?? e}`)
    process.exit(1)
  }
  say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s. ${HINT}`)
  if (tty) process.stdout.write("\x1b[2J\x1b[?25l")
  let lastPlain = 0
  const printed = new Set()
  let tick = 0
  while (!stopping) {
    try {
      if (tick++ % 3 === 0) await fleet.syncAgents()
      const snap = await takeSnapshot(fleet)
      const lines = render(snap, { width: tty ? (process.stdout.columns ?? 160) : 200 })
      if (tty) {
        process.stdout.write(`\x1b[H${[...lines, "", HINT].map((l) => `${l}\x1b[K`).join("\n")}\x1b[J`)
      } else {
        for (const e of snap.events.filter((e) => !printed.has(e.uid))) {
          printed.add(e.uid)
          console.log(`event ${safe(e.reason)} ${safe(e.node)}: ${safe(e.message)}`)
        }
        if (Date.now() - lastPlain > 15_000) {
          console.log(lines.join("\n"))
          lastPlain = Date.now()
        }
      }
    } catch (e) {
      if (!stopping) console.error(`view: ${e?.message ?? e}`)
    }
    await new Promise((r) => setTimeout(r, 1000))
  }
}
