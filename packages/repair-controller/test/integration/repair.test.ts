/**
 * The repair controller against the real local cluster: kwok nodes, real PDBs, real evictions, the real
 * binary in a child process (so it can be SIGKILLed). Timings are second-scale via config; the real
 * 10m/30m values are covered by the TestClock unit tests.
 */
import {
  clients,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  deleteRunNodes,
  waitFor,
  waitForPodPhase
} from "@nodemend/cluster-harness"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { Result } from "effect"
import { parseReboots, REBOOTS_CONFIGMAP } from "../../src/domain/Reboots.ts"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type ControllerProcess,
  deployedNodeFlags,
  killControllers,
  type StartOptions,
  startControllerProcess
} from "./controllerProcess.ts"
import {
  createPdb,
  createPool,
  expectCapacityFirst,
  handoverLease,
  isTainted,
  journalSampler,
  leaseHolder,
  nodeEvents,
  readNodeOrUndefined,
  repairPhase,
  replacementOf,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent,
  waitForNodeGone,
  waitForReplacementReady
} from "./helpers.ts"

const c = clients()
const { core, policy } = c
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []

const start = async (config: unknown, identity?: string, options?: StartOptions) => {
  const p = await startControllerProcess(kubeconfig, config, identity, options)
  running.push(p)
  return p
}

beforeAll(async () => {
  ns = await createTestNamespace(core, "ctl")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("repair controller on a real cluster", () => {
  it("full cycle: condition False -> toleration -> taint -> PDB-respecting drain -> terminate -> replacement Ready", async () => {
    const s = scenario("full")
    const nodes = await createPool(core, s, 5)
    const target = nodes[0]!.metadata!.name!
    const app = `${s.tag}-app`
    const pod = await createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } })
    const tolerating = await createTestPod(core, ns, { bindTo: target, labels: { app: `${app}-tol` } })
    await waitForPodPhase(core, ns, pod.metadata!.name!)
    await createPdb(policy, ns, app, 0)
    const ctl = await start(testConfig(ns, s))
    const facts = journalSampler(core, ns, target)
    const t0 = Date.now()
    await setKernelReady(core, target, "False")

    await waitForEvent(core, target, "RepairStarted")
    // Toleration 3 s from lastTransitionTime, which has whole-second precision (truncated): >= t0 + 2 s.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000)
    await waitForEvent(core, target, "Tainted")
    await waitForEvent(core, target, "Drained")
    // The pod that tolerates the repair taint was not evicted: drained means without it. An eviction would have
    // deleted it (a kwok pod goes at once) or marked it with a DisruptionTarget condition (EvictionByEvictionAPI);
    // it stays until the Node goes (pod GC takes it 40 s after that).
    const kept = await core
      .readNamespacedPod({ name: tolerating.metadata!.name!, namespace: ns })
      .catch(() => undefined)
    expect(kept, "the pod that tolerates the repair taint, after the drain").toBeDefined()
    expect(kept?.metadata?.deletionTimestamp).toBeUndefined()
    expect(kept?.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toBeUndefined()
    expect(kept?.spec?.nodeName).toBe(target)
    await waitForNodeGone(core, target)
    const replacement = await waitForReplacementReady(core, target)
    await waitForEvent(core, target, "RepairSucceeded")
    await facts.stop()

    // Capacity first (the kwok provider's default order): the replacement was Ready before the drain began.
    await expectCapacityFirst(core, target, facts.records, replacement.metadata!.name!)
    expect(replacement.metadata?.labels?.["karpenter.sh/nodepool"]).toBe(s.pool)
    expect(replacement.metadata?.labels?.["topology.kubernetes.io/zone"]).toBe("test-zone-a")
    expect((await nodeEvents(core, target, "TerminatingInstance")).length).toBe(1)
    // The evicted pod is gone.
    await waitFor(
      "evicted pod gone",
      async () =>
        (await core
          .readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })
          .catch(() => undefined)) === undefined
          ? true
          : undefined,
      { timeoutMs: 90_000 }
    )
    expect(ctl.logs()).toContain('"repair succeeded"')
    const journals = await core.listNamespacedConfigMap({
      namespace: ns,
      labelSelector: "nodemend.io/repair-journal=true"
    })
    expect(journals.items.filter((j) => j.metadata?.name?.includes(target))).toEqual([])
  })

  it("breaker: 3 of 10 unhealthy in a pool -> none repaired; 2 of 10 -> both repaired", async () => {
    const s = scenario("brk")
    const nodes = (await createPool(core, s, 10)).map((n) => n.metadata!.name!)
    const bad = nodes.slice(0, 3)
    await Promise.all(bad.map((n) => setKernelReady(core, n, "False")))
    await start(testConfig(ns, s))
    for (const n of bad) await waitForEvent(core, n, "RepairBlocked")
    await sleep(3000)
    for (const n of bad) {
      expect(isTainted(await readNodeOrUndefined(core, n))).toBe(false)
      expect(await nodeEvents(core, n, "RepairStarted")).toEqual([])
    }
    const note = (await nodeEvents(core, bad[0]!, "RepairBlocked"))[0]?.message ?? ""
    expect(note).toContain("3 of 10, allowed 2")
    // One recovers: 2 of 10 is within ceil(20% x 10) = 2, and both are repaired.
    await setKernelReady(core, bad[2]!, "True")
    for (const n of bad.slice(0, 2)) await waitForEvent(core, n, "RepairSucceeded", 60_000)
    expect(await nodeEvents(core, bad[2]!, "RepairStarted")).toEqual([])
    expect(await readNodeOrUndefined(core, bad[2]!)).toBeDefined()
  })

  it("zonal shift on -> repairs stand down; off -> they resume", async () => {
    const s = scenario("zs")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const cm = `shifts-${s.tag}`
    const expiresAt = new Date(Date.now() + 3600_000).toISOString()
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: cm },
        data: { shifts: JSON.stringify([{ kind: "zonal-shift", zone: "test-zone-b", expiresAt }]) }
      }
    })
    const target = nodes[0]!
    await setKernelReady(core, target, "False")
    await start(testConfig(ns, s))
    await waitForEvent(core, target, "RepairStandDown")
    await sleep(2000)
    expect(isTainted(await readNodeOrUndefined(core, target))).toBe(false)
    expect(await nodeEvents(core, target, "RepairStarted")).toEqual([])
    await core.deleteNamespacedConfigMap({ name: cm, namespace: ns })
    await waitForEvent(core, target, "RepairStarted", 30_000)
    await waitForEvent(core, target, "RepairSucceeded", 60_000)
  })

  it("provider cannot answer (malformed shift ConfigMap) -> fail closed", async () => {
    const s = scenario("zsu")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: `shifts-${s.tag}` }, data: { shifts: "not json" } }
    })
    await setKernelReady(core, nodes[0]!, "False")
    const ctl = await start(testConfig(ns, s))
    const [e] = await waitForEvent(core, nodes[0]!, "RepairStandDown")
    expect(e?.message).toContain("failing closed")
    await sleep(1500)
    expect(isTainted(await readNodeOrUndefined(core, nodes[0]!))).toBe(false)
    const metrics = await ctl.get("/metrics")
    expect(metrics.body).toMatch(/nodemend_controller_zonal_shift_stand_down\{cause="unknown"\} 1/)
  })

  it("a condition cleared at 90% of its toleration is not repaired", async () => {
    const s = scenario("clr")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    // 15 s toleration; cleared at 13.5 s. (lastTransitionTime has second precision, so it may read up to 1 s early.)
    await start(
      testConfig(ns, s, {
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 15 }]
      })
    )
    const t0 = Date.now()
    await setKernelReady(core, target, "False")
    await sleep(13_500 - (Date.now() - t0))
    await setKernelReady(core, target, "True")
    await sleep(4000)
    const n = await readNodeOrUndefined(core, target)
    expect(isTainted(n)).toBe(false)
    expect(await repairPhase(core, ns, target)).toBeUndefined()
    expect(await nodeEvents(core, target, "RepairStarted")).toEqual([])
  })

  it("PDB with 0 disruptions allowed: the drain waits, then forces at the deadline (drainMode force)", async () => {
    const s = scenario("pdbf")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    const app = `${s.tag}-app`
    const pod = await createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } })
    await waitForPodPhase(core, ns, pod.metadata!.name!)
    await createPdb(policy, ns, app, 1)
    await start(
      testConfig(ns, s, {
        drain: {
          deadlineSeconds: 5,
          onDeadline: "force",
          evictionBackoffInitialMs: 200,
          evictionBackoffMaxMs: 1000
        }
      })
    )
    await setKernelReady(core, target, "False")
    await waitForEvent(core, target, "EvictionBlocked")
    expect(await repairPhase(core, ns, target)).toBe("Draining")
    expect(
      (await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })).metadata?.deletionTimestamp
    ).toBeUndefined()
    await waitForEvent(core, target, "DrainForced", 30_000)
    await waitForEvent(core, target, "RepairSucceeded", 60_000)
  })

  it("PDB with 0 disruptions allowed and drainMode wait: keeps waiting past the deadline, resumes when the PDB allows", async () => {
    const s = scenario("pdbw")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    const app = `${s.tag}-app`
    const pod = await createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } })
    await waitForPodPhase(core, ns, pod.metadata!.name!)
    const pdb = await createPdb(policy, ns, app, 1)
    await start(
      testConfig(ns, s, {
        reasons: { ForkFailedOutOfPIDs: { drainMode: "wait", drainDeadlineSeconds: 3 } }
      })
    )
    await setKernelReady(core, target, "False")
    await waitForEvent(core, target, "DrainDeadlineExceeded", 30_000)
    await sleep(3000)
    expect(await repairPhase(core, ns, target)).toBe("Draining")
    expect(
      (await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })).metadata?.deletionTimestamp
    ).toBeUndefined()
    expect(await nodeEvents(core, target, "DrainForced")).toEqual([])
    await policy.deleteNamespacedPodDisruptionBudget({ name: pdb, namespace: ns })
    await waitForEvent(core, target, "RepairSucceeded", 60_000)
  })

  it("Reboot: the condition clears after the reboot -> untainted and kept; still False -> escalated to Replace", async () => {
    const s = scenario("rbt")
    const nodes = (await createPool(core, s, 10)).map((n) => n.metadata!.name!)
    const [healed, stuck] = [nodes[0]!, nodes[1]!]
    await start(
      testConfig(ns, s, {
        reasons: { ForkFailedOutOfPIDs: { action: "Reboot" } },
        // The healed node's condition is cleared as soon as its Rebooting Event is seen: 8 s is the time the
        // test has to do that (the two reboots need not start together; CI once saw them 2 s apart).
        reboot: { settleSeconds: 8, timeoutSeconds: 60 },
        // Both in flight at once (10% of 10 would be 1: the stuck one would wait for the healed one's repair).
        maxInFlight: "2"
      })
    )
    await Promise.all([setKernelReady(core, healed, "False"), setKernelReady(core, stuck, "False")])
    await waitForEvent(core, healed, "Rebooting")
    await setKernelReady(core, healed, "True")
    await waitForEvent(core, stuck, "Rebooting")
    await waitForEvent(core, healed, "RepairSucceeded", 30_000)
    const n = await readNodeOrUndefined(core, healed)
    expect(n?.metadata?.annotations?.["nodemend.io/kwok-rebooted-at"]).toBeDefined()
    expect(isTainted(n)).toBe(false)
    expect(await repairPhase(core, ns, healed)).toBeUndefined()
    expect(await nodeEvents(core, healed, "TerminatingInstance")).toEqual([])

    await waitForEvent(core, stuck, "RepairEscalated", 30_000)
    await waitForReplacementReady(core, stuck)
    await waitForEvent(core, stuck, "RepairSucceeded", 60_000)
  })

  it("escalation across repairs (#41 item 2): rebooted, the fault back within the window after a controller restart -> replaced", async () => {
    const s = scenario("esc")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    const config = testConfig(ns, s, {
      reasons: { ForkFailedOutOfPIDs: { action: "Reboot" } },
      reboot: { settleSeconds: 4, timeoutSeconds: 60 },
      escalation: { windowSeconds: 600 }
    })
    const first = await start(config, "esc-a")
    await setKernelReady(core, target, "False")
    await waitForEvent(core, target, "Rebooting")
    await setKernelReady(core, target, "True")
    await waitForEvent(core, target, "RepairSucceeded", 30_000)
    expect(await nodeEvents(core, target, "TerminatingInstance")).toEqual([])
    // The reboot is journaled; the controller that made it is killed, and a new one has only the journal.
    const journal = await core.readNamespacedConfigMap({ namespace: ns, name: REBOOTS_CONFIGMAP })
    const marks = parseReboots(journal.data?.reboots ?? "")
    expect(Result.isSuccess(marks) && marks.success.some((m) => m.node === target)).toBe(true)
    await first.kill("SIGKILL")
    running.splice(running.indexOf(first), 1)
    await start(config, "esc-b")

    // The fault comes back well within the window: replaced, not rebooted again.
    await setKernelReady(core, target, "False")
    const [escalated] = await waitForEvent(core, target, "RepairEscalated", 30_000)
    expect(escalated?.message).toMatch(
      /^rebooted for KernelReady \(ForkFailedOutOfPIDs\) at \S+ \(repair \S+\), the fault came back after 0m .*: replacing instead of rebooting$/
    )
    await waitForReplacementReady(core, target)
    await waitForEvent(core, target, "TerminatingInstance", 60_000)
    expect(await nodeEvents(core, target, "Rebooting")).toHaveLength(1)
  })

  it("do-not-repair annotation is honoured", async () => {
    const s = scenario("dnr")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    await core.patchNode(
      { name: target, body: { metadata: { annotations: { "nodemend.io/do-not-repair": "true" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await setKernelReady(core, target, "False")
    await start(testConfig(ns, s))
    await waitForEvent(core, target, "RepairVetoed")
    await sleep(1500)
    const n = await readNodeOrUndefined(core, target)
    expect(isTainted(n)).toBe(false)
    expect(await repairPhase(core, ns, target)).toBeUndefined()
  })

  it("dry-run decides and emits WouldRepair, and mutates nothing", async () => {
    const s = scenario("dry")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const target = nodes[0]!
    const pod = await createTestPod(core, ns, {
      bindTo: target,
      tolerations: [],
      labels: { app: `${s.tag}-app` }
    })
    await waitForPodPhase(core, ns, pod.metadata!.name!)
    await setKernelReady(core, target, "False")
    const before = await core.readNode({ name: target })
    await start(testConfig(ns, s, { dryRun: true }))
    const [e] = await waitForEvent(core, target, "WouldRepair")
    expect(e?.message).toContain("would Replace")
    await sleep(2000)
    const after = await core.readNode({ name: target })
    // Only what the controller could write is compared: kube-controller-manager keeps changing its own taints
    // (node.kubernetes.io/not-ready) and annotations (node.alpha.kubernetes.io/ttl) on a young node.
    const ours = (n: typeof after) => ({
      taints: (n.spec?.taints ?? []).filter((t) => t.key.startsWith("nodemend.io/")),
      annotations: Object.entries(n.metadata?.annotations ?? {}).filter(([k]) =>
        k.startsWith("nodemend.io/")
      ),
      labels: Object.entries(n.metadata?.labels ?? {}).filter(([k]) => k.startsWith("nodemend.io/"))
    })
    expect(ours(after)).toEqual(ours(before))
    expect(ours(after).taints).toEqual([])
    expect(
      (await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })).metadata?.deletionTimestamp
    ).toBeUndefined()
    const journals = await core.listNamespacedConfigMap({
      namespace: ns,
      labelSelector: "nodemend.io/repair-journal=true"
    })
    expect(journals.items.filter((j) => j.metadata?.name?.includes(target))).toEqual([])
    expect(await replacementOf(core, target)).toBeUndefined()
  })

  describe("SIGKILL mid-repair: a restarted controller completes with exactly one termination", () => {
    const killAndResume = async (
      prefix: string,
      killWhen: (ctx: { target: string; pdb: string }) => Promise<void>,
      over: Record<string, unknown> = {}
    ) => {
      const s = scenario(prefix)
      const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
      const target = nodes[0]!
      const app = `${s.tag}-app`
      const pods = await Promise.all(
        [0, 1].map(() => createTestPod(core, ns, { bindTo: target, tolerations: [], labels: { app } }))
      )
      for (const p of pods) await waitForPodPhase(core, ns, p.metadata!.name!)
      // minAvailable 1 of 2: one eviction passes, the second is held until the test lifts the PDB.
      const pdb = await createPdb(policy, ns, app, 1)
      const config = testConfig(ns, s, { ...handoverLease(s), ...over })
      const first = await start(config, `${s.tag}-a`)
      await setKernelReady(core, target, "False")
      await killWhen({ target, pdb })
      await first.kill("SIGKILL")
      await policy.deleteNamespacedPodDisruptionBudget({ name: pdb, namespace: ns }).catch(() => undefined)
      const second = await start(config, `${s.tag}-b`)
      await waitForReplacementReady(core, target)
      await waitForEvent(core, target, "RepairSucceeded", 60_000)
      expect((await nodeEvents(core, target, "TerminatingInstance")).length).toBe(1)
      expect(await readNodeOrUndefined(core, target)).toBeUndefined()
      const replacements = await core.listNode({ labelSelector: `nodemend.io/replacement-of=${target}` })
      expect(replacements.items).toHaveLength(1)
      return { first, second }
    }

    it("killed right after the taint", async () => {
      await killAndResume("k-taint", async ({ target }) => {
        await waitFor(
          "taint",
          async () => (isTainted(await readNodeOrUndefined(core, target)) ? true : undefined),
          {
            timeoutMs: 30_000,
            intervalMs: 50
          }
        )
      })
    })

    it("killed mid-drain (one pod evicted, one held by its PDB)", async () => {
      await killAndResume("k-drain", async ({ target }) => {
        await waitForEvent(core, target, "EvictionBlocked", 30_000)
        expect(await repairPhase(core, ns, target)).toBe("Draining")
      })
    })

    it("killed right after the instance was terminated", async () => {
      // Remove first, with a replacement that takes 5 s: the kill lands while the repair waits for it (capacity
      // first ends the repair within milliseconds of the Node going: the kill raced its last step).
      await killAndResume(
        "k-term",
        async ({ target, pdb }) => {
          await policy.deleteNamespacedPodDisruptionBudget({ name: pdb, namespace: ns })
          await waitForNodeGone(core, target)
        },
        {
          replacement: { timeoutSeconds: 90, capacityFirst: false },
          kwok: { replacementDelaySeconds: 5, zonalShiftConfigMap: "shifts-k-term" }
        }
      )
    })
  })

  // Through the shipped bundle with the Deployment's V8 flags: what we ship is what this tests.
  it("two replicas of the bundle: one leader acts, the other stands by and takes over when the leader dies", async () => {
    const s = scenario("ha")
    const nodes = (await createPool(core, s, 5)).map((n) => n.metadata!.name!)
    const config = testConfig(ns, s, handoverLease(s))
    const shipped = { bundle: true, nodeFlags: deployedNodeFlags() }
    expect(shipped.nodeFlags.length).toBeGreaterThan(0)
    const a = await start(config, `${s.tag}-a`, shipped)
    const b = await start(config, `${s.tag}-b`, shipped)
    const lease = `ctl-${s.tag}`
    const holder = await waitFor("a lease holder", () => leaseHolder(c, ns, lease), { timeoutMs: 30_000 })
    const [leader, standby] = holder === a.identity ? [a, b] : [b, a]
    await waitFor("both ready", async () => {
      const [ra, rb] = await Promise.all([a.get("/readyz"), b.get("/readyz")]).catch(() => [
        { status: 0 },
        { status: 0 }
      ])
      return ra.status === 200 && rb.status === 200 ? true : undefined
    })
    expect((await leader.get("/metrics")).body).toMatch(/nodemend_controller_leader 1/)
    expect((await standby.get("/metrics")).body).not.toMatch(/nodemend_controller_leader 1/)
    expect((await standby.get("/healthz")).status).toBe(200)

    await setKernelReady(core, nodes[0]!, "False")
    await waitForEvent(core, nodes[0]!, "RepairSucceeded", 60_000)
    const started = await nodeEvents(core, nodes[0]!, "RepairStarted")
    expect(started).toHaveLength(1)
    expect(started[0]?.reportingInstance).toBe(leader.identity)

    await leader.kill("SIGKILL")
    await waitFor(
      "standby takes the lease",
      async () => ((await leaseHolder(c, ns, lease)) === standby.identity ? true : undefined),
      {
        timeoutMs: 30_000
      }
    )
    await setKernelReady(core, nodes[1]!, "False")
    await waitForEvent(core, nodes[1]!, "RepairSucceeded", 60_000)
    expect((await nodeEvents(core, nodes[1]!, "RepairStarted"))[0]?.reportingInstance).toBe(standby.identity)
  })
})
