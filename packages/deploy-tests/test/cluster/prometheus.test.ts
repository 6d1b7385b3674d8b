// The alert rules and the dashboard through a real Prometheus (the cluster's, `cluster:up --prometheus`; npm test
// starts it): the controller and an agent are scraped as deploy/monitoring/podmonitors.yaml describes (their
// targets listed with the pods' meta labels, the PodMonitors' relabelings applied), nodemend-alerts.yaml loaded
// as shipped. The story, asserted through Prometheus' HTTP API:
// 0. no controller scraped: NodemendNoLeader is active (pending, or firing once the cluster is 5 minutes old);
// 1. a healthy fleet (a controller that leads, an agent): no alert pending or firing;
// 2. faults: in pool A (two nodes, one in flight at a time) a repair fails and keeps its slot while the other node
//    is queued: NodemendRepairsFailing fires, NodemendPoolHeldByFailedRepair is pending; pool B's only node is
//    unhealthy with maxUnhealthyPercent 0: NodemendBreakerOpen is pending; the agent's kernel log skips records:
//    NodemendAgentKmsgSequenceGaps fires; a second agent whose service account may read its Node but not write its
//    status: NodemendAgentNotReady is pending for that node;
// 3. an active zonal shift: NodemendStoodDownForZonalShift pending; a shift list the provider cannot read:
//    NodemendStoodDownProviderUnknown pending instead;
// 4. every panel query of nodemend-dashboard.json returns data;
// 5. the fake cloud (packages/fake-cloud), scraped by the test Prometheus' static job (it is a test tool: the chart
//    has no PodMonitor for it): the EC2 calls made to it arrive counted by action and outcome (one throttled by an
//    injected fault), its instances by state, and the fault still pending.
// `for` is as shipped (15 or 30 minutes) in the cluster's Prometheus: there those alerts are asserted pending, the
// ones without `for` firing. A second Prometheus (scaledPrometheus.ts) scrapes the same targets with the shipped rules
// but every `for:` divided by FOR_DIVISOR: in it NoLeader (step 0), BreakerOpen, PoolHeldByFailedRepair and
// AgentNotReady (step 2) and both stand-downs (step 3) are asserted firing, and nothing on the healthy fleet (step 1).
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { createTestPod, kubeconfigPath, RUN_ID, TEST_RUN_LABEL, waitFor } from "@nodemend/cluster-harness"
import { RbacAuthorizationV1Api } from "@kubernetes/client-node"
import { describe, expect, it } from "vitest"
import { parse as parseYaml, stringify } from "yaml"
import { AdminClient, startFakeCloud } from "@nodemend/fake-cloud"
import { FAKE_CLOUD_JOB, writeStaticTargets } from "../../../../tools/cluster/prometheus.mjs"
import { makeFakeHost } from "../../../agent/test/integration/agent-process.ts"
import { panelQueries, readDashboard, variableQueries } from "../../src/dashboard.ts"
import { type ActiveAlert, hasAlert, prometheusApi, show } from "./prometheusApi.ts"
import { POOL_LABEL, prometheusStory, ZONE_LABEL } from "./prometheusStory.ts"
import { type ScaledPrometheus, startScaledPrometheus } from "./scaledPrometheus.ts"

const IT_LABEL = "nodemend.io/prometheus-it"
const ZONE = "test-zone-a"
/**
 * The second Prometheus' `for:` divisor: 15m -> 3 s, 30m -> 5 s, 5m -> 1 s; still longer than the 1 s evaluation
 * interval, so each alert is pending before it fires there too.
 */
const FOR_DIVISOR = 360

const story = prometheusStory("prom")
const { prometheus, core, tag, scratch, outputs } = story
const rbac = story.kc.makeApiClient(RbacAuthorizationV1Api)
const poolA = `${tag}-a`
const poolB = `${tag}-b`
const readOnlyRole = `${tag}-agent-read-only`
story.onCleanup(async () => {
  const ignore = () => undefined
  await rbac.deleteClusterRoleBinding({ name: readOnlyRole }).catch(ignore)
  await rbac.deleteClusterRole({ name: readOnlyRole }).catch(ignore)
})

/**
 * A kubeconfig for a service account that may GET Nodes and nothing else (the agent reads its Node, then every
 * status patch is refused): the admin kubeconfig's cluster, the account's token.
 */
const readOnlyKubeconfig = async (): Promise<string> => {
  const namespace = story.namespace()
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "agent-read-only" } } })
  await rbac.createClusterRole({
    body: {
      metadata: { name: readOnlyRole },
      rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }]
    }
  })
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: readOnlyRole },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: readOnlyRole },
      subjects: [{ kind: "ServiceAccount", name: "agent-read-only", namespace }]
    }
  })
  const token = await core.createNamespacedServiceAccountToken({
    name: "agent-read-only",
    namespace,
    body: { spec: { expirationSeconds: 3600 } }
  })
  const admin = parseYaml(readFileSync(kubeconfigPath(), "utf8")) as {
    clusters: { name: string; cluster: Record<string, unknown> }[]
  }
  const cluster = admin.clusters[0]!
  const path = join(scratch, "read-only.kubeconfig")
  writeFileSync(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [cluster],
      users: [{ name: "read-only", user: { token: token.status!.token } }],
      contexts: [{ name: "read-only", context: { cluster: cluster.name, user: "read-only" } }],
      "current-context": "read-only"
    })
  )
  return path
}

// (The test skips without a Prometheus: nothing calls these then.)
const { activeAlerts, instant, alertsUntil: alertsUntilWith } = story.api
/** What the alerts read and the binaries said, for a failure message. */
const diagnose = async () => `--- series ---\n${await series()}\n--- binaries ---\n${outputs()}`
/** Waits until the active alerts satisfy `ok`; fails naming what was active last, the series, the binaries' output. */
const alertsUntil = (what: string, ok: (alerts: ReadonlyArray<ActiveAlert>) => boolean) =>
  alertsUntilWith(what, ok, diagnose)
/** What the alerts read, for a failure message. */
const series = async () => {
  const out: string[] = []
  for (const expr of [
    "nodemend_controller_pool_failed_repairs",
    "nodemend_controller_pool_repairs_in_flight",
    "nodemend_controller_breaker_open",
    "nodemend_controller_zonal_shift_stand_down",
    "nodemend_controller_repairs_failed_total"
  ])
    out.push(`${expr}: ${JSON.stringify(await instant(expr).catch((e: unknown) => String(e)))}`)
  return out.join("\n")
}

/** An EC2 Query call to the fake cloud, SigV4-shaped (the fake checks the signature's form, not its value). */
const ec2Call = async (url: string, params: Record<string, string>) => {
  const date = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "")
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "x-amz-date": date,
      authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${date.slice(0, 8)}/us-west-2/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"a".repeat(64)}`
    },
    body: new URLSearchParams({ Version: "2016-11-15", ...params }).toString()
  })
  await res.text()
  return res.status
}

const writeShifts = async (shifts: string) => {
  const body = { metadata: { name: `shifts-${tag}`, namespace: story.namespace() }, data: { shifts } }
  await core
    .replaceNamespacedConfigMap({ name: `shifts-${tag}`, namespace: story.namespace(), body })
    .catch(() => core.createNamespacedConfigMap({ namespace: story.namespace(), body }))
}

describe.skipIf(prometheus === undefined)("a real Prometheus: the alerts and the dashboard's queries", () => {
  it("a healthy fleet raises nothing; faults, a breaker, a stand-down raise their alerts; every panel has data", async () => {
    const { node, unhealthy } = story
    const scaled: ScaledPrometheus = await startScaledPrometheus(prometheus!.targetsDir, FOR_DIVISOR)
    story.onCleanup(() => scaled.stop())
    /** Waits until the second Prometheus (for: scaled down) fires all of `names` with their labels. */
    const firingScaled = (what: string, wanted: ReadonlyArray<[string, Record<string, string>?]>) =>
      prometheusApi(scaled.url).alertsUntil(
        `${what} firing with for: scaled down`,
        (alerts) => wanted.every(([name, labels]) => hasAlert(alerts, name, "firing", labels)),
        diagnose,
        60_000
      )
    const nodeLabels = (pool: string) => ({
      [IT_LABEL]: tag,
      [POOL_LABEL]: pool,
      [ZONE_LABEL]: ZONE
    })
    const a1 = await node(`${tag}-a1`, nodeLabels(poolA))
    const a2 = await node(`${tag}-a2`, nodeLabels(poolA))
    const b1 = await node(`${tag}-b1`, nodeLabels(poolB))
    for (const n of [a1, a2, b1]) await createTestPod(core, story.namespace(), { bindTo: n, tolerations: [] })
    const agentNode = await node(`${tag}-agent`, {})
    await writeShifts("[]")

    // The controller: kwok provider, this run's Nodes; a replacement that cannot come up in time (the repair fails).
    const controller = await story.startController({
      cloudProvider: "kwok",
      nodeSelector: `${TEST_RUN_LABEL}=${RUN_ID},${IT_LABEL}=${tag}`,
      policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 1 }],
      maxUnhealthyPercent: 100,
      maxInFlight: "1",
      pools: { [poolB]: { maxUnhealthyPercent: 0 } },
      drain: {
        deadlineSeconds: 3,
        onDeadline: "force",
        evictionBackoffInitialMs: 200,
        evictionBackoffMaxMs: 500
      },
      zonalShift: { refreshSeconds: 1 },
      breaker: { requeueSeconds: 2 },
      // A lease that outlasts a loaded machine's stalls: one replica, so it never waits for a handover.
      leaderElection: { leaseName: `ctl-${tag}`, leaseDurationSeconds: 15, renewIntervalSeconds: 2 },
      kwok: { replacementDelaySeconds: 600, zonalShiftConfigMap: `shifts-${tag}` },
      replacement: { timeoutSeconds: 2 },
      resyncSeconds: 30
    })
    const host = makeFakeHost("6a1f0c2e-0000-4000-8000-0000000000b2")
    const agentTarget = await story.startAgent({ nodeName: agentNode, host, pod: `nodemend-agent-${tag}` })
    story.listAgents([agentTarget])

    // 0. The agent scraped, no controller: no leader (firing in the second Prometheus).
    await alertsUntil("NoLeader while no controller is scraped", (alerts) =>
      alerts.some((a) => a.labels.alertname === "NodemendNoLeader")
    )
    await firingScaled("NoLeader", [["NodemendNoLeader"]])
    controller.listed()

    // 1. Healthy: both scraped, the controller leads, nothing pending or firing (NoLeader clears once it leads).
    await waitFor(
      "both targets up, the controller leading",
      async () => {
        const up = await instant("sum(up)")
        const leader = await instant("cluster:nodemend_controller_leader:sum")
        return up[0]?.value[1] === "2" && leader[0]?.value[1] === "1" ? true : undefined
      },
      { timeoutMs: 120_000, intervalMs: 500 }
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n--- binaries ---\n${outputs()}`)
    })
    // The agent series carry the node label the PodMonitor's relabeling adds (the counter appears with the agent's
    // first condition write, which a loaded machine may scrape after both targets are up).
    await waitFor(
      "the agent's condition writes scraped with its node label",
      async () =>
        (await instant(`nodemend_agent_condition_writes_total{node="${agentNode}", namespace="kube-system"}`))
          .length > 0
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 500 }
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n--- binaries ---\n${outputs()}`)
    })
    await alertsUntil("no alert on a healthy fleet", (alerts) => alerts.length === 0)
    // Still none a few evaluations later, in either Prometheus (the second's `for:` long over by then).
    await new Promise((r) => setTimeout(r, 3000))
    expect(show(await activeAlerts())).toBe("(none)")
    expect(show(await prometheusApi(scaled.url).activeAlerts())).toBe("(none)")

    // 2. Faults: pool A's repair fails and holds its slot (the other node queued); pool B's breaker opens; the
    // agent's kernel log skips 1000 records; a second agent cannot write its conditions.
    for (const n of [a1, a2, b1]) await unhealthy(n)
    host.appendKmsg("watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]")
    appendFileSync(join(host.root, "dev/kmsg"), "6,1000000,3700000000,-;records before this one were lost\n")
    const readOnlyNode = await node(`${tag}-agent-ro`, {})
    const readOnlyTarget = await story.startAgent({
      nodeName: readOnlyNode,
      host: makeFakeHost("6a1f0c2e-0000-4000-8000-0000000000b3"),
      pod: `nodemend-agent-${tag}-ro`,
      kubeconfig: await readOnlyKubeconfig()
    })
    story.listAgents([agentTarget, readOnlyTarget])
    const expected = [
      "NodemendRepairsFailing",
      "NodemendPoolHeldByFailedRepair",
      "NodemendBreakerOpen",
      "NodemendAgentKmsgSequenceGaps",
      "NodemendAgentNotReady"
    ]
    const raised = await alertsUntil(
      "a failed repair, a held slot, an open breaker, kernel log gaps, an agent that cannot write",
      (alerts) =>
        hasAlert(alerts, "NodemendAgentKmsgSequenceGaps", "firing", {
          node: agentNode,
          severity: "warning"
        }) &&
        hasAlert(alerts, "NodemendAgentNotReady", "pending", { node: readOnlyNode, outcome: "failed" }) &&
        hasAlert(alerts, "NodemendRepairsFailing", "firing", {
          condition: "KernelReady",
          reason: "ForkFailedOutOfPIDs",
          action: "Replace",
          severity: "critical"
        }) &&
        hasAlert(alerts, "NodemendPoolHeldByFailedRepair", "pending", { pool: poolA }) &&
        hasAlert(alerts, "NodemendBreakerOpen", "pending", { pool: poolB })
    )
    // Nothing else: not pool A's breaker (100%), not the other pool's slot, no leader trouble, nothing of the first
    // agent's condition writes.
    expect(raised.map((a) => a.labels.alertname).filter((n) => !expected.includes(n!))).toEqual([])
    expect(
      raised.filter((a) => a.labels.alertname === "NodemendAgentNotReady").map((a) => a.labels.node)
    ).toEqual([readOnlyNode])
    expect(
      raised.filter((a) => a.labels.alertname === "NodemendBreakerOpen").map((a) => a.labels.pool)
    ).toEqual([poolB])
    // Past their `for:` (scaled): the open breaker, the held slot and the agent that cannot write fire, nothing else.
    const fired = await firingScaled("the open breaker, the held slot, the agent that cannot write", [
      ["NodemendBreakerOpen", { pool: poolB }],
      ["NodemendPoolHeldByFailedRepair", { pool: poolA }],
      ["NodemendAgentNotReady", { node: readOnlyNode }]
    ])
    expect(fired.map((a) => a.labels.alertname).filter((n) => !expected.includes(n!))).toEqual([])

    // 3. A zonal shift (in a zone none of these nodes is in: the stand-down gauge is the controller's), then a
    // shift list the provider cannot read: it fails closed.
    await writeShifts(
      JSON.stringify([
        { kind: "zonal-shift", zone: "test-zone-z", expiresAt: "2099-01-01T00:00:00Z", applied: true }
      ])
    )
    await alertsUntil("stood down for a zonal shift", (alerts) =>
      hasAlert(alerts, "NodemendStoodDownForZonalShift", "pending", { cause: "shift" })
    )
    await firingScaled("stood down for a zonal shift", [
      ["NodemendStoodDownForZonalShift", { cause: "shift" }]
    ])
    await writeShifts("not json")
    await alertsUntil(
      "stood down, provider unknown",
      (alerts) =>
        hasAlert(alerts, "NodemendStoodDownProviderUnknown", "pending", { cause: "unknown" }) &&
        !alerts.some((a) => a.labels.alertname === "NodemendStoodDownForZonalShift")
    )
    await firingScaled("stood down, provider unknown", [
      ["NodemendStoodDownProviderUnknown", { cause: "unknown" }]
    ])

    // 4. Every panel's query (and variable) returns data now.
    await waitFor(
      "the agent's finding and event scraped",
      async () => ((await instant("nodemend_agent_events_total")).length > 0 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 500 }
    )
    const dashboard = readDashboard()
    const empty: string[] = []
    for (const q of [...panelQueries(dashboard), ...variableQueries(dashboard)])
      if ((await instant(q.expr)).length === 0) empty.push(`${q.name}: ${q.expr}`)
    expect(empty).toEqual([])

    // 5. The fake cloud, scraped: two DescribeInstances (the first throttled by an injected fault), a RunInstances,
    // a second fault that no call uses up.
    const cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 50, terminateDelayMs: 50 })
    story.onCleanup(() => cloud.close())
    writeStaticTargets(prometheus!.targetsDir, FAKE_CLOUD_JOB, [new URL(cloud.url).host])
    const admin = new AdminClient(cloud.url)
    await admin.injectFault({ kind: "throttle", target: "ec2", action: "DescribeInstances" })
    await admin.injectFault({ kind: "error", target: "ec2", action: "TerminateInstances" })
    expect(await ec2Call(cloud.url, { Action: "DescribeInstances" })).toBe(503)
    expect(await ec2Call(cloud.url, { Action: "DescribeInstances" })).toBe(200)
    expect(
      await ec2Call(cloud.url, {
        Action: "RunInstances",
        MinCount: "1",
        MaxCount: "1",
        InstanceType: "m5.large",
        ImageId: "ami-1"
      })
    ).toBe(200)
    const job = `job="${FAKE_CLOUD_JOB}"`
    const calls = (action: string, outcome: string) =>
      `nodemend_fake_cloud_api_calls_total{${job}, api="ec2", action="${action}", outcome="${outcome}"}`
    const want: Record<string, string> = {
      [`up{${job}}`]: "1",
      [calls("DescribeInstances", "throttled")]: "1",
      [calls("DescribeInstances", "ok")]: "1",
      [calls("RunInstances", "ok")]: "1",
      [`nodemend_fake_cloud_instances{${job}, state="running"}`]: "1",
      [`nodemend_fake_cloud_faults_pending{${job}, kind="error"}`]: "1",
      [`nodemend_fake_cloud_faults_pending{${job}, kind="throttle"}`]: "0"
    }
    let got: Record<string, string | undefined> = {}
    await waitFor(
      "the fake cloud's series in Prometheus",
      async () => {
        got = {}
        for (const expr of Object.keys(want)) got[expr] = (await instant(expr))[0]?.value[1]
        return Object.keys(want).every((k) => got[k] === want[k]) ? true : undefined
      },
      { timeoutMs: 60_000, intervalMs: 500 }
    ).catch(() => undefined)
    expect(got).toEqual(want)
  }, 420_000)
})
