// Every metric (and matcher label) the alert rules in deploy/monitoring/nodemend-alerts.yaml and the panels of
// nodemend-dashboard.json use is one the real binaries serve on /metrics (the agent's with the labels its
// PodMonitor adds). Effect registers a series on its first update, so each binary is driven through what its
// alerts and panels watch before it is scraped:
// - the controller (kwok provider, scoped to this run's Nodes) first in dry-run (WouldRepair), then acting on
//   two Nodes of a pool with a pod each and an in-flight budget of 1: one repair (eviction, terminate, a
//   replacement that cannot come up in time, so it fails and keeps its slot) while the other is queued;
// - the agent on a kwok Node with a temporary host root, with a soft lockup in its kernel log (a finding,
//   an Event).
// A metric renamed in the code, or in the rules, fails here.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  clients,
  createFakeNode,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  deleteRunNodes,
  kubeconfigPath,
  patchNodeCondition,
  RUN_ID,
  TEST_RUN_LABEL,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeFakeHost } from "../../../agent/test/integration/agent-process.ts"
import { stringify } from "yaml"
import {
  exposedTypes,
  missingFromExposition,
  parseExposition,
  readAlertsFile,
  recordsOf,
  sourceMetrics
} from "../../src/alertRules.ts"
import { panelQueries, readDashboard, variableQueries } from "../../src/dashboard.ts"
import { DEPLOY_DIR, find, type KubeObject, parseObjects } from "../../src/index.ts"
import { documentedMetrics } from "../../src/operationsDoc.ts"
import { type Binary, freePort, spawnSourceBinary } from "./binaries.ts"

const IT_LABEL = "nodemend.io/alerts-it"
const POOL_LABEL = "karpenter.sh/nodepool"

const { core } = clients()
const kubeconfig = kubeconfigPath()
const tag = uniqueName("alerts").slice(0, 40)
const scratch = mkdtempSync(join(tmpdir(), "nodemend-alerts-"))
const rulesFile = readAlertsFile()
const groups = rulesFile.spec.groups
const records = recordsOf(rulesFile)
const alertsOfGroup = (name: string) => groups.filter((g) => g.name === name).flatMap((g) => g.rules)
const dashboard = readDashboard()
const dashboardQueries = [...panelQueries(dashboard), ...variableQueries(dashboard)]
/** The dashboard's queries that read one binary's metrics (through the recording rules). */
const queriesOf = (prefix: string) =>
  dashboardQueries.filter((q) => sourceMetrics(q.expr, records).every((m) => m.startsWith(prefix)))

/**
 * The labels a PodMonitor's scrape adds to every series of its pods: Prometheus' target labels and the
 * relabelings' target labels (the agent's `node`).
 */
const podMonitorLabels = (name: string): string[] => {
  type PodMonitor = KubeObject & {
    spec: { podMetricsEndpoints: { relabelings?: { targetLabel?: string }[] }[] }
  }
  const monitors = parseObjects(readFileSync(join(DEPLOY_DIR, "monitoring", "podmonitors.yaml"), "utf8"))
  const monitor = find(monitors, "PodMonitor", name) as PodMonitor
  return [
    ...["job", "instance", "namespace", "pod", "container", "endpoint"],
    ...monitor.spec.podMetricsEndpoints.flatMap((e) =>
      (e.relabelings ?? []).flatMap((r) => r.targetLabel ?? [])
    )
  ]
}
const scraped = (served: ReadonlyMap<string, ReadonlySet<string>>, labels: ReadonlyArray<string>) =>
  new Map([...served].map(([name, own]) => [name, new Set([...own, ...labels])]))
let namespace = ""
const running: Binary[] = []
const spawnBinary = (main: string, args: ReadonlyArray<string>, port: number) =>
  spawnSourceBinary(running, main, args, port)

const scrape = async (b: Binary): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${b.port}/metrics`)
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
  return res.text()
}

/** Scrapes until every name is served (each appears on its first update), or fails with the binary's output. */
const scrapeUntil = (b: Binary, names: ReadonlyArray<string>, what: string, timeoutMs = 180_000) =>
  waitFor(
    what,
    async () => {
      if (b.proc.exitCode !== null) throw new Error(`exited ${b.proc.exitCode}:\n${b.output().slice(-4000)}`)
      const text = await scrape(b).catch(() => "")
      const served = parseExposition(text)
      return names.every((n) => served.has(n)) ? text : undefined
    },
    { timeoutMs, intervalMs: 250 }
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\n--- output ---\n${b.output().slice(-4000)}`)
  })

const merge = (...texts: string[]) => {
  const out = new Map<string, Set<string>>()
  for (const t of texts)
    for (const [name, labels] of parseExposition(t))
      out.set(name, new Set([...(out.get(name) ?? []), ...labels]))
  return out
}

/** docs/operations.md's reference table says what the scrape shows: type and label names of every served metric. */
const expectDocumented = (heading: string, texts: ReadonlyArray<string>) => {
  const served = merge(...texts)
  const types = new Map(texts.flatMap((t) => [...exposedTypes(t)]))
  const rows = documentedMetrics(heading).filter((m) => types.has(m.name))
  expect(rows.length).toBeGreaterThan(0)
  for (const row of rows) {
    expect(types.get(row.name), row.name).toBe(row.type)
    const labels = served.get(row.type === "histogram" ? `${row.name}_count` : row.name) ?? new Set<string>()
    expect([...labels].sort(), row.name).toEqual([...row.labels].sort())
  }
}

const setKernelReadyFalse = (name: string) =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status: "False",
    reason: "ForkFailedOutOfPIDs",
    message: "fork failed: out of PIDs (alert rules test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

beforeAll(async () => {
  namespace = await createTestNamespace(core, "alerts")
})
afterAll(async () => {
  for (const b of running.splice(0)) await b.stop()
  await deleteRunNodes(core)
  if (namespace) await deleteNamespace(core, namespace)
  rmSync(scratch, { recursive: true, force: true })
})

describe("alert rules use only metrics the binaries serve", () => {
  it("nodemend-controller: dry-run, then a repair that drains, terminates and fails while another is queued", async () => {
    const fakeNode = async (suffix: string) =>
      (
        await createFakeNode(core, {
          name: `${tag}-${suffix}`,
          labels: {
            [IT_LABEL]: tag,
            [POOL_LABEL]: `${tag}-pool`,
            "topology.kubernetes.io/zone": "test-zone-a"
          }
        })
      ).metadata!.name!
    const node = await fakeNode("ctl")
    const second = await fakeNode("ctl2")
    // A healthy node of the zone: the zone gauges count nodes by the zone their owner proved, and the two unhealthy
    // ones are proven only once they fall due; a healthy node's label places its zone from the start.
    await fakeNode("ctl-healthy")
    // A pod to drain on each (its phase does not matter: kwok may be slow to start it on a loaded cluster): either
    // may be the one repaired.
    await createTestPod(core, namespace, { bindTo: node, tolerations: [] })
    await createTestPod(core, namespace, { bindTo: second, tolerations: [] })
    const config = (dryRun: boolean) => ({
      cloudProvider: "kwok",
      namespace,
      dryRun,
      nodeSelector: `${TEST_RUN_LABEL}=${RUN_ID},${IT_LABEL}=${tag}`,
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 1 }],
      // Both nodes are due; the breaker lets them through, the budget lets one in flight: the other is queued.
      maxUnhealthyPercent: 100,
      maxInFlight: "1",
      drain: {
        deadlineSeconds: 3,
        onDeadline: "force",
        evictionBackoffInitialMs: 200,
        evictionBackoffMaxMs: 500
      },
      zonalShift: { refreshSeconds: 1 },
      breaker: { requeueSeconds: 2 },
      leaderElection: { leaseName: `ctl-${tag}`, leaseDurationSeconds: 6, renewIntervalSeconds: 1 },
      // The replacement would come up after 10 minutes; the repair gives up waiting after 2 s.
      kwok: { replacementDelaySeconds: 600, zonalShiftConfigMap: `shifts-${tag}` },
      replacement: { timeoutSeconds: 2 },
      resyncSeconds: 30
    })
    const start = async (dryRun: boolean) => {
      const path = join(scratch, `controller-${dryRun ? "dry" : "act"}.yaml`)
      writeFileSync(path, stringify(config(dryRun)))
      const port = await freePort()
      return spawnBinary(
        "packages/repair-controller/src/main.ts",
        [
          "--config",
          path,
          "--kubeconfig",
          kubeconfig,
          "--identity",
          `${tag}-${dryRun}`,
          "--port",
          String(port)
        ],
        port
      )
    }
    await setKernelReadyFalse(node)
    await setKernelReadyFalse(second)

    const dry = await start(true)
    const dryText = await scrapeUntil(
      dry,
      [
        "nodemend_controller_would_repair_total",
        "nodemend_controller_leader",
        "nodemend_controller_breaker_open"
      ],
      "dry-run WouldRepair"
    )
    await dry.stop()
    // Dry-run wrote nothing: no taint, no repair record.
    const untouched = await core.readNode({ name: node })
    expect(untouched.metadata?.annotations?.["nodemend.io/repair"]).toBeUndefined()

    const acting = await start(false)
    const actText = await scrapeUntil(
      acting,
      [
        "nodemend_controller_repairs_started_total",
        "nodemend_controller_evictions_total",
        "nodemend_controller_instance_terminations_total",
        "nodemend_controller_repairs_failed_total",
        "nodemend_controller_repairs_queued_total",
        "nodemend_controller_repair_phase_seconds_bucket",
        "nodemend_controller_repair_duration_seconds_bucket",
        "nodemend_controller_pool_in_flight_budget"
      ],
      "repair started, drained, terminated, failed; the other queued"
    )
    await acting.stop()

    const served = merge(dryText, actText)
    expectDocumented("Controller", [dryText, actText])
    expect(missingFromExposition(alertsOfGroup("nodemend-controller"), served)).toEqual([])
    // The dashboard's controller panels, through the same recording rules.
    const controllerQueries = queriesOf("nodemend_controller_")
    expect(controllerQueries.length).toBeGreaterThan(8)
    expect(missingFromExposition(controllerQueries, served, records)).toEqual([])
    const withoutBudget = new Map(served)
    withoutBudget.delete("nodemend_controller_pool_in_flight_budget")
    expect(missingFromExposition(controllerQueries, withoutBudget, records)).toEqual([
      'panel "Repairs in flight vs budget" B: metric nodemend_controller_pool_in_flight_budget is not served'
    ])
    // The check bites: the same rules against a scrape without one of their metrics report it.
    const renamed = new Map(served)
    renamed.delete("nodemend_controller_breaker_open")
    // The check bites through a recording rule: the record names the metric, the alert the record.
    expect(missingFromExposition(alertsOfGroup("nodemend-controller"), renamed)).toEqual(
      expect.arrayContaining([
        "pool:nodemend_controller_breaker_open:max: metric nodemend_controller_breaker_open is not served",
        "NodemendBreakerOpen: metric pool:nodemend_controller_breaker_open:max is not served"
      ])
    )
  }, 300_000)

  it("nodemend-agent: a kwok Node, a temporary host root and a soft lockup in its kernel log", async () => {
    const node = (await createFakeNode(core, { name: `${tag}-agent`, labels: { [IT_LABEL]: tag } })).metadata!
      .name!
    const host = makeFakeHost("6a1f0c2e-0000-4000-8000-0000000000a1")
    const root = host.root
    const port = await freePort()
    const agent = spawnBinary(
      "packages/agent/src/main.ts",
      [
        "--node-name",
        node,
        "--kubeconfig",
        kubeconfig,
        "--host-root",
        root,
        "--health-address",
        `127.0.0.1:${port}`
      ],
      port
    )
    await waitFor(
      "agent ready",
      async () => {
        if (agent.proc.exitCode !== null) throw new Error(`agent exited:\n${agent.output().slice(-4000)}`)
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
        return res?.status === 200 ? true : undefined
      },
      { timeoutMs: 120_000, intervalMs: 250 }
    )
    host.appendKmsg("watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]")
    const text = await scrapeUntil(
      agent,
      [
        "nodemend_agent_findings_total",
        "nodemend_agent_events_total",
        "nodemend_agent_condition_writes_total",
        "nodemend_agent_condition_false"
      ],
      "agent finding and event"
    )
    await agent.stop()
    host.cleanup()
    expect(text).toMatch(/^nodemend_agent_findings_total\{[^}]*reason="SoftLockup"/m)

    const served = parseExposition(text)
    expectDocumented("Agent", [text])
    expect(missingFromExposition(alertsOfGroup("nodemend-agent"), served)).toEqual([])
    // The dashboard's agent panels filter by the `node` label the PodMonitor adds: as Prometheus stores them.
    const agentQueries = queriesOf("nodemend_agent_")
    expect(agentQueries.length).toBeGreaterThan(4)
    const asScraped = scraped(served, podMonitorLabels("nodemend-agent"))
    expect(missingFromExposition(agentQueries, asScraped, records)).toEqual([])
    expect(missingFromExposition(agentQueries, served, records).join("\n")).toMatch(/has no label node/)
    const renamed = new Map(served)
    renamed.delete("nodemend_agent_kmsg_sequence_gaps_total")
    expect(missingFromExposition(alertsOfGroup("nodemend-agent"), renamed)).toEqual(
      expect.arrayContaining([
        "node:nodemend_agent_kmsg_sequence_gaps:increase10m: metric nodemend_agent_kmsg_sequence_gaps_total is not served",
        "NodemendAgentKmsgSequenceGaps: metric node:nodemend_agent_kmsg_sequence_gaps:increase10m is not served"
      ])
    )
  }, 360_000)

  it("every dashboard query reads the metrics of exactly one binary", () => {
    expect(queriesOf("nodemend_controller_").length + queriesOf("nodemend_agent_").length).toBe(
      dashboardQueries.length
    )
  })

  it("every metric the rules use belongs to one of the two binaries", () => {
    for (const g of groups) {
      const prefix = g.name === "nodemend-controller" ? "nodemend_controller_" : "nodemend_agent_"
      for (const a of g.rules)
        for (const m of sourceMetrics(a.expr, records)) expect(m, a.expr).toMatch(new RegExp(`^${prefix}`))
    }
  })
})
