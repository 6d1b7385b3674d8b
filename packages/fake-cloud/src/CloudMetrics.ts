/**
 * The fake's Prometheus metrics (`GET /metrics`, text format 0.0.4), so the test Prometheus scrapes it beside the
 * controller and the agents: API calls by api, action and outcome (counted when the answer is sent), and, read at
 * scrape time, instances by state, active zonal shifts and autoshifts, and injected faults not yet used up. A
 * handful of series from plain Node: a hand-written formatter, not a metrics library.
 */
import type { ActiveFault, Api } from "./Faults.ts"
import type { InstanceStateName } from "./InstanceStore.ts"

/** `throttled`: an injected throttle answered; `error`: any other 4xx or 5xx (injected or not). */
export type CallOutcome = "ok" | "throttled" | "error"

export const INSTANCE_STATES: ReadonlyArray<InstanceStateName> = [
  "pending",
  "running",
  "shutting-down",
  "terminated",
  "stopping",
  "stopped"
]

export interface CloudSnapshot {
  readonly instanceStates: ReadonlyArray<InstanceStateName>
  readonly activeZonalShifts: number
  readonly activeAutoshifts: number
  readonly faults: ReadonlyArray<ActiveFault>
}

const escapeLabelValue = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
    .join(",")}}`

export class CallCounts {
  readonly #counts = new Map<string, { api: Api; action: string; outcome: CallOutcome; n: number }>()

  add(api: Api, action: string, outcome: CallOutcome): void {
    const key = JSON.stringify([api, action, outcome])
    const c = this.#counts.get(key) ?? { api, action, outcome, n: 0 }
    c.n++
    this.#counts.set(key, c)
  }

  entries(): ReadonlyArray<{ api: Api; action: string; outcome: CallOutcome; n: number }> {
    return [...this.#counts.values()]
  }
}

/** The outcome of an answered call: its status, and whether an injected throttle answered it. */
export const callOutcome = (status: number, throttled: boolean): CallOutcome =>
  throttled ? "throttled" : status < 400 ? "ok" : "error"

/** The exposition text: every family with HELP and TYPE; every instance state and fault kind, 0 included. */
export const renderMetrics = (calls: CallCounts, cloud: CloudSnapshot): string => {
  const lines: string[] = []
  const family = (name: string, type: string, help: string, samples: ReadonlyArray<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
    for (const [l, v] of samples) lines.push(`${name}${l} ${v}`)
  }
  family(
    "nodemend_fake_cloud_api_calls_total",
    "counter",
    "EC2, Auto Scaling and ARC calls answered, by api, action and outcome (ok, throttled, error).",
    calls.entries().map((c) => [labels({ api: c.api, action: c.action, outcome: c.outcome }), c.n])
  )
  family(
    "nodemend_fake_cloud_instances",
    "gauge",
    "Instances by state.",
    INSTANCE_STATES.map((s) => [labels({ state: s }), cloud.instanceStates.filter((x) => x === s).length])
  )
  family("nodemend_fake_cloud_zonal_shifts_active", "gauge", "Active zonal shifts and autoshifts, by kind.", [
    [labels({ kind: "zonal-shift" }), cloud.activeZonalShifts],
    [labels({ kind: "autoshift" }), cloud.activeAutoshifts]
  ])
  family(
    "nodemend_fake_cloud_faults_pending",
    "gauge",
    "Injected faults: requests they will still hit, by kind.",
    (["throttle", "error", "slow"] as const).map((k) => [
      labels({ kind: k }),
      cloud.faults.filter((f) => f.spec.kind === k).reduce((n, f) => n + f.remaining, 0)
    ])
  )
  return `${lines.join("\n")}\n`
}
