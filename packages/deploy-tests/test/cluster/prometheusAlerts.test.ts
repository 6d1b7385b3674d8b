// More of the alert rules through the real Prometheus (the cluster's, `cluster:up --prometheus`), beside
// prometheus.test.ts' story: the situations that raise NodemendZoneStoodDown, NodemendDrainBlockedPastDeadline,
// NodemendDCGMError and NodemendRepairsHeldForRelapse, made with the real binaries and nodemend-alerts.yaml loaded
// as shipped:
// - one controller (kwok provider), one pool over two zones: zone x's three nodes fail at once (3 of 3, over the
//   zone breaker's 20% while zone y is at it): zone x stands down, NodemendZoneStoodDown is pending (for: 15m);
// - zone y's first failing node is repaired: its replacement comes up, but its one pod is guarded by a
//   PodDisruptionBudget that allows no disruption and drain.onDeadline is wait: evictions are refused (429) past
//   the drain deadline, NodemendDrainBlockedPastDeadline is pending (for: 15m);
// - an agent on a GPU node whose DCGM host engine refuses connections (the libdcgm test double,
//   NMDOUBLE_DCGM_REFUSE=1) past its grace period: NodemendDCGMError fires (no for);
// - a pool whose launch template is "broken" (every replacement comes up with the fault its original was repaired
//   for, as relapse.test.ts does it): after 2 relapses its repairs are held, NodemendRepairsHeldForRelapse fires;
//   its replacements fail the health gate (#41), so its repair may fail too: NodemendRepairsFailing and
//   NodemendPoolHeldByFailedRepair, for pool r only;
// and nothing else is pending or firing.
// Then firing for the two with a long `for:`: a second Prometheus (scaledPrometheus.ts) scrapes the same targets
// with a rule file generated at test time from the shipped one in which only `for:` is divided by 60 (15m -> 15s);
// in them the two go firing while the conditions hold, and nothing else is active. The shipped `for:` values and the
// cluster's Prometheus are unchanged.
import { PolicyV1Api } from "@kubernetes/client-node"
import { createTestPod, RUN_ID, TEST_RUN_LABEL } from "@nodemend/cluster-harness"
import { describe, expect, it } from "vitest"
import { H100_PCI_DEVICES, makeFakeHost } from "../../../agent/test/integration/agent-process.ts"
import { buildGpuDoubles } from "../../../dcgm-native/test/double/build.ts"
import { type ActiveAlert, hasAlert, prometheusApi, show } from "./prometheusApi.ts"
import { POOL_LABEL, prometheusStory, ZONE_LABEL } from "./prometheusStory.ts"
import { startScaledPrometheus } from "./scaledPrometheus.ts"

const IT_LABEL = "nodemend.io/prometheus-it"

const story = prometheusStory("promal")
const { prometheus, core, tag, unhealthy } = story
const policy = story.kc.makeApiClient(PolicyV1Api)
/** Pool r's broken-launch-template injector runs while this is true (the clean-up stops it). */
let injecting = false
story.onCleanup(() => {
  injecting = false
})

describe.skipIf(prometheus === undefined)(
  "a real Prometheus: zone stand-down, a blocked drain, DCGM down",
  () => {
    it("raise NodemendZoneStoodDown and NodemendDrainBlockedPastDeadline (pending; firing with for: scaled), NodemendDCGMError and NodemendRepairsHeldForRelapse (firing), nothing else", async () => {
      const { instant, alertsUntil } = story.api
      const scaled = await startScaledPrometheus(prometheus!.targetsDir, 60)
      story.onCleanup(() => scaled.stop())
      const namespace = story.namespace()
      const pool = `${tag}-p`
      const [zoneX, zoneY] = [`${tag}-zx`, `${tag}-zy`]
      const { node } = story
      const inZone = (zone: string) => ({ [IT_LABEL]: tag, [POOL_LABEL]: pool, [ZONE_LABEL]: zone })
      const xs = await Promise.all([1, 2, 3].map((i) => node(`${tag}-x${i}`, inZone(zoneX))))
      const ys = await Promise.all([1, 2, 3, 4, 5].map((i) => node(`${tag}-y${i}`, inZone(zoneY))))
      const blocked = ys[0]!
      // Pool r in zone y, its launch template "broken": every replacement comes up Ready, then with the fault its
      // original was repaired for; after 2 relapses its repairs are held. Zone y has 20 nodes, so its unhealthy
      // share (the blocked drain, pool r's relapsing nodes) stays at or under the zone breaker's 20%.
      const poolR = `${tag}-r`
      const relapsing = await node(`${tag}-r1`, { ...inZone(zoneY), [POOL_LABEL]: poolR })
      await Promise.all(Array.from({ length: 14 }, (_, i) => node(`${tag}-y${i + 6}`, inZone(zoneY))))
      // The one pod on the node to drain, its PDB allowing no disruption; no tolerations (a pod that tolerates the
      // repair taint is not drained, as with Karpenter).
      const app = `${tag}-app`
      await createTestPod(core, namespace, { bindTo: blocked, labels: { app }, tolerations: [] })
      await policy.createNamespacedPodDisruptionBudget({
        namespace,
        body: {
          metadata: { name: `pdb-${tag}` },
          spec: { minAvailable: 1, selector: { matchLabels: { app } } }
        }
      })
      const shifts = `shifts-${tag}`
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: shifts }, data: { shifts: "[]" } }
      })

      const controller = await story.startController({
        cloudProvider: "kwok",
        nodeSelector: `${TEST_RUN_LABEL}=${RUN_ID},${IT_LABEL}=${tag}`,
        // Long enough for the controller to see zone x's three faults together before any falls due.
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 3 }],
        maxUnhealthyPercent: 100,
        maxInFlight: "100%",
        relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 },
        zoneBreaker: { enabled: true, maxUnhealthyPercent: 20, minUnhealthyNodes: 3 },
        drain: {
          deadlineSeconds: 2,
          onDeadline: "wait",
          evictionBackoffInitialMs: 200,
          evictionBackoffMaxMs: 500
        },
        zonalShift: { refreshSeconds: 1 },
        breaker: { requeueSeconds: 2 },
        // A lease that outlasts a loaded machine's stalls: one replica, so it never waits for a handover.
        leaderElection: { leaseName: `ctl-${tag}`, leaseDurationSeconds: 15, renewIntervalSeconds: 2 },
        // The replacement comes up at once: the drain (after it, as Karpenter does) is what blocks.
        kwok: { replacementDelaySeconds: 1, zonalShiftConfigMap: shifts },
        replacement: { timeoutSeconds: 120 },
        resyncSeconds: 30
      })

      // The GPU node's agent: NVIDIA devices, DCGM (the test double) refusing connections, a 1 s grace period.
      const agentNode = await node(`${tag}-gpu`, {})
      const host = makeFakeHost("6a1f0c2e-0000-4000-8000-0000000000c4")
      host.write("proc/bus/pci/devices", H100_PCI_DEVICES)
      const agentConfig = host.writeConfig(
        [
          "monitors:",
          "  nvidia:",
          `    dcgmLibraryPath: ${buildGpuDoubles().dcgm}`,
          "    nvmlLibraryPath: /nonexistent/libnvidia-ml.so.1",
          "    graceSeconds: 1",
          "    reconnectInitialSeconds: 1",
          "    reconnectMaxSeconds: 1",
          ""
        ].join("\n")
      )
      const agent = await story.startAgent({
        nodeName: agentNode,
        host,
        pod: `nodemend-agent-${tag}`,
        config: agentConfig,
        env: { NMDOUBLE_DCGM_REFUSE: "1" }
      })
      controller.listed()
      story.listAgents([agent])

      // Zone x's three nodes fail together; zone y's first (1 of 5, at the zone breaker's 20%, not over it).
      await Promise.all([...xs, blocked, relapsing].map(unhealthy))
      const faulted = new Set<string>()
      injecting = true
      const injector = (async () => {
        while (injecting) {
          const l = await core.listNode({
            labelSelector: `${IT_LABEL}=${tag},${POOL_LABEL}=${poolR},nodemend.io/replacement-of`
          })
          for (const n of l.items) {
            const name = n.metadata!.name!
            const ready = n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
            if (!faulted.has(name) && ready && injecting) {
              faulted.add(name)
              await unhealthy(name)
            }
          }
          await new Promise((r) => setTimeout(r, 250))
        }
      })()

      const diagnose = async () => {
        const out: string[] = []
        for (const expr of [
          "nodemend_controller_zones_stood_down",
          "nodemend_controller_evictions_total",
          "nodemend_controller_active_repairs",
          "nodemend_controller_relapse_holds",
          'nodemend_agent_findings_total{reason="DCGMError"}'
        ])
          out.push(`${expr}: ${JSON.stringify(await instant(expr).catch((e: unknown) => String(e)))}`)
        out.push("--- binaries ---", story.outputs())
        return out.join("\n")
      }
      // Pool r's repair fails too once its replacements have all failed the health gate (#41: a replacement that
      // comes up with the fault is never capacity; another is launched up to replacement.maxAttempts): the two
      // alerts of a failed repair may join, for pool r and its reason only (checked below).
      const failedRepair = ["NodemendRepairsFailing", "NodemendPoolHeldByFailedRepair"]
      const expected = [
        "NodemendZoneStoodDown",
        "NodemendDrainBlockedPastDeadline",
        "NodemendDCGMError",
        "NodemendRepairsHeldForRelapse",
        ...failedRepair
      ]
      const onlyPoolR = (alerts: ReadonlyArray<ActiveAlert>) =>
        alerts
          .filter((a) => failedRepair.includes(a.labels.alertname!))
          .filter(
            (a) =>
              (a.labels.pool ?? poolR) !== poolR ||
              (a.labels.reason ?? "ForkFailedOutOfPIDs") !== "ForkFailedOutOfPIDs"
          )
      const raised = await alertsUntil(
        "a zone stood down, a drain blocked by a PDB, DCGM unreachable, repairs held for relapse",
        (alerts) =>
          hasAlert(alerts, "NodemendRepairsHeldForRelapse", "firing") &&
          hasAlert(alerts, "NodemendZoneStoodDown", "pending") &&
          hasAlert(alerts, "NodemendDrainBlockedPastDeadline", "pending", { outcome: "pdb-blocked" }) &&
          hasAlert(alerts, "NodemendDCGMError", "firing", { node: agentNode, reason: "DCGMError" }),
        diagnose
      )
      // Nothing else: no pool breaker (100%), no failed repair but pool r's, no zonal-shift stand-down, no agent trouble.
      expect(show(raised.filter((a) => !expected.includes(a.labels.alertname!)))).toBe("(none)")
      expect(show(onlyPoolR(raised))).toBe("(none)")
      // The stand-down is zone x's, the blocked drain zone y's node (the series the alerts read).
      const zones = await instant("nodemend_controller_zone_stand_down == 1")
      expect(zones.map((s) => s.metric.zone)).toEqual([zoneX])
      // The hold is pool r's (for the reason its nodes relapsed with).
      const holds = await instant("nodemend_controller_relapse_hold == 1")
      expect(holds.map((s) => [s.metric.pool, s.metric.reason])).toEqual([[poolR, "ForkFailedOutOfPIDs"]])

      // Firing, in the Prometheus whose rules differ from the shipped ones only in `for:` (divided by 60).
      const firing = await prometheusApi(scaled.url).alertsUntil(
        "the zone stand-down and the blocked drain firing with for: scaled down",
        (alerts) =>
          hasAlert(alerts, "NodemendZoneStoodDown", "firing") &&
          hasAlert(alerts, "NodemendDrainBlockedPastDeadline", "firing", { outcome: "pdb-blocked" }) &&
          hasAlert(alerts, "NodemendDCGMError", "firing", { node: agentNode }) &&
          hasAlert(alerts, "NodemendRepairsHeldForRelapse", "firing"),
        diagnose,
        60_000
      )
      expect(show(firing.filter((a) => !expected.includes(a.labels.alertname!)))).toBe("(none)")
      expect(show(onlyPoolR(firing))).toBe("(none)")
      injecting = false
      await injector
    }, 240_000)
  }
)
