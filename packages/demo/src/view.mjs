/**
 * The live view: a snapshot (snapshot.mjs) rendered as lines. Pure, so the scenario can check what an
 * operator would read. Text from the cluster (reasons, messages) is stripped of control characters first.
 */
import { CONDITION_TYPES, TOLERATIONS } from "./fleet.mjs"

const SHORT = {
  KernelReady: "KERNEL",
  ContainerRuntimeReady: "RUNTIME",
  NetworkingReady: "NETWORK",
  StorageReady: "STORAGE",
  AcceleratedHardwareReady: "ACCEL"
}
/** The controller's defaults, for a pool the snapshot has no settings for. */
const DEFAULT_SETTINGS = { maxUnhealthyPercent: 20, maxInFlight: "10%" }

/** Int-or-percent against `size`, percent rounded up (as the controller's in-flight budget). */
const scaled = (value, size) => {
  const m = /^(\d+)%$/.exec(value)
  return m ? Math.ceil((Number(m[1]) * size) / 100) : Number(value)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
export const safe = (s) => String(s ?? "").replace(CONTROL, " ")

const secs = (ms) => `${Math.max(0, Math.ceil(ms / 1000))}s`
const clock = (ms) => new Date(ms).toISOString().slice(11, 19)
const pad = (s, n) => (s.length >= n ? s.slice(0, n) : s + " ".repeat(n - s.length))

/** The one thing to say about a node: repair phase, hold (vetoed / breaker / stand-down), timer, or healthy. */
export const nodeState = (node, snap) => {
  const repair = snap.repairs[node.name]
  if (repair && repair.phase !== "Succeeded" && repair.phase !== "Failed")
    return `repair: ${repair.phase} (${safe(repair.reason)})`
  const bad = node.conditions.filter((c) => CONDITION_TYPES.includes(c.type) && c.status === "False")
  if (node.deleting) return "terminated, being removed"
  if (bad.length === 0)
    return node.vetoed ? "healthy (do-not-repair set)" : node.ready === "True" ? "healthy" : "not ready"
  const c = bad[0]
  const last = [...snap.events].reverse().find((e) => e.node === node.name)
  if (node.vetoed) return `${c.type} ${safe(c.reason)}: VETOED (do-not-repair), never repaired`
  const left = Date.parse(c.lastTransitionTime) + (TOLERATIONS[c.type] ?? 0) * 1000 - snap.at
  if (left > 0) return `${c.type} ${safe(c.reason)}: toleration ${secs(left)} left`
  if (last?.reason === "RepairQueued") {
    const q = /(\d+) repairs? in flight in [^,]*, allowed (\d+)/.exec(last.message)
    const pos = /queue position (\d+ of \d+) \(rank (\w+)/.exec(last.message)
    return `${c.type} ${safe(c.reason)}: QUEUED: ${q ? `${q[1]} in flight, allowed ${q[2]}` : safe(last.message)}${pos ? `; ${pos[1]} in line (${pos[2]})` : ""}`
  }
  if (last?.reason === "RepairHeld") {
    const h = /(\d+) nodes of .* came back with .* within (\S+) of a repair/.exec(last.message)
    return `${c.type} ${safe(c.reason)}: HELD for relapse (${h ? `${h[1]} replacements relapsed within ${h[2]}` : safe(last.message)}; kubectl nodemend release ${safe(node.pool)} ${safe(c.reason)})`
  }
  if (last?.reason === "RepairBlocked")
    return `${c.type} ${safe(c.reason)}: HELD by breaker (${safe(/\((\d+ of \d+, allowed \d+)\)/.exec(last.message)?.[1] ?? last.message)})`
  if (last?.reason === "RepairStandDown")
    return `${c.type} ${safe(c.reason)}: STAND-DOWN: ${safe(last.message)}`
  if (last?.reason === "RepairRefused") return `${c.type} ${safe(c.reason)}: REFUSED: ${safe(last.message)}`
  return `${c.type} ${safe(c.reason)}: toleration over, repair due`
}

const cell = (node, type) => {
  const c = node.conditions.find((x) => x.type === type)
  return c === undefined ? "-" : c.status === "True" ? "ok" : c.status === "False" ? "FAIL" : "?"
}

const metric = (snap, name, pool) =>
  snap.metrics.find((m) => m.name === `nodemend_controller_${name}` && m.labels.pool === pool)?.value

export const render = (snap, { title = "nodemend demo", width = 160 } = {}) => {
  const lines = [
    `${title}   ${clock(snap.at)}   tolerations shortened for the demo: ${Object.entries(TOLERATIONS)
      .map(([t, s]) => `${SHORT[t]} ${s}s`)
      .join(", ")} (defaults 10-30 min)`
  ]
  const pools = [...new Set(snap.nodes.map((n) => n.pool))].sort()
  for (const pool of pools) {
    const nodes = snap.nodes
      .filter((n) => n.pool === pool)
      .sort((a, b) => a.zone.localeCompare(b.zone) || a.name.localeCompare(b.name))
    const size = metric(snap, "pool_nodes", pool) ?? nodes.length
    const unhealthy = metric(snap, "pool_unhealthy_nodes", pool) ?? 0
    const open = metric(snap, "breaker_open", pool) === 1
    const settings = snap.poolSettings?.[pool] ?? DEFAULT_SETTINGS
    const allowed = Math.ceil((settings.maxUnhealthyPercent * size) / 100)
    const repairing = nodes.filter((n) => {
      const r = snap.repairs[n.name]
      return r && r.phase !== "Succeeded" && r.phase !== "Failed"
    }).length
    const standDown = metric(snap, "zonal_shift_stand_down", pool) === 1
    lines.push(
      "",
      `pool ${pool}: ${nodes.length} nodes   breaker ${open ? "OPEN (repairs held)" : "closed"}: unhealthy ${unhealthy} of ${size}, allowed ${allowed} (${settings.maxUnhealthyPercent}%)   repairs in flight ${repairing}, allowed ${scaled(settings.maxInFlight, size)} (maxInFlight "${settings.maxInFlight}")${standDown ? "   ZONAL-SHIFT STAND-DOWN" : ""}`,
      `  ${pad("NODE", 44)} ${pad("ZONE", 11)} ${pad("READY", 6)}${CONDITION_TYPES.map((t) => pad(SHORT[t], 8)).join("")}STATE`
    )
    for (const n of nodes)
      lines.push(
        `  ${pad(n.name, 44)} ${pad(n.zone, 11)} ${pad(n.ready === "True" ? "ok" : n.ready === "False" ? "FAIL" : "?", 6)}${CONDITION_TYPES.map((t) => pad(cell(n, t), 8)).join("")}${n.tainted ? "[tainted] " : ""}${nodeState(n, snap)}`
      )
  }
  lines.push(
    "",
    `zonal shifts: ${
      snap.shifts.length === 0
        ? "none"
        : snap.shifts
            .map(
              (s) =>
                `away from ${safe(s.awayFrom)} (${safe(s.zonalShiftId)}): repairs in that zone stand down`
            )
            .join("; ")
    }`,
    "last events:"
  )
  const recent = snap.events.slice(-8)
  if (recent.length === 0) lines.push("  (none yet)")
  for (const e of recent)
    lines.push(`  ${clock(e.at)} ${pad(safe(e.reason), 20)} ${safe(e.node)}: ${safe(e.message)}`)
  return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l))
}
