/**
 * nodemend in a Karpenter cluster (issue #16), next to the real Karpenter (kwok provider v1.15, NodeRepair on,
 * started by the cluster tooling): a Karpenter node is repaired through Karpenter's objects (a NodeClaim made by
 * nodemend, Ready before the drain; the broken NodeClaim deleted, its finalizer left to Karpenter), never through
 * the cloud; a replacement that is not Ready in time takes the documented fallback; a NodePool veto holds a whole
 * pool; a node Karpenter is already taking away is left alone.
 */
import type { V1Node } from "@kubernetes/client-node"
import {
  clients,
  createFakeNode,
  createNodePool,
  createTestNamespace,
  DO_NOT_DISRUPT,
  deleteNamespace,
  deleteNodePool,
  karpenterClients,
  getNodeClaim,
  getNodePool,
  karpenterNodePool,
  listNodeClaims,
  createNodeClaim,
  deleteNodeClaim,
  nodeClaimLike,
  NODECLAIM_FINALIZER,
  nodeOf,
  patchNodeCondition,
  provisionNodes,
  uniqueName,
  waitFor,
  waitForPoolNodes
} from "@nodemend/cluster-harness"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { nodeCore } from "@nodemend/cluster-harness/nodeIdentity"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ledgerConfigMapName, parseLedger } from "../../src/domain/RelapseLedger.ts"
import { type AgentReports, reportAsAgents } from "./agentReport.ts"
import { breakReplacements } from "./brokenReplacements.ts"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  createPdb,
  isTainted,
  nodeEvents,
  readNodeOrUndefined,
  sleep,
  testConfig,
  waitForEvent,
  waitForHeldReplacement
} from "./helpers.ts"

const { kc, core, policy } = clients()
const { custom, apps } = karpenterClients(kc)
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
let ns = ""
const running: ControllerProcess[] = []
const pools: string[] = []
/** What the pools' agents would report (no agent runs on kwok): the replacement health gate reads it. */
const agents: AgentReports[] = []

/** The integration tests' config, scoped to a NodePool (Karpenter's nodes carry no test label of ours). */
const configFor = (pool: string, over: Record<string, unknown> = {}) => {
  const s = { tag: pool, pool, labels: {} }
  return testConfig(ns, s, {
    nodeSelector: `karpenter.sh/nodepool=${pool}`,
    maxInFlight: "100%",
    drain: {
      deadlineSeconds: 30,
      onDeadline: "force",
      evictionBackoffInitialMs: 200,
      evictionBackoffMaxMs: 1000
    },
    ...over
  })
}

const start = async (config: unknown) => {
  const p = await startControllerProcess(kubeconfig, config)
  running.push(p)
  return p
}

/** A NodePool of `size` Nodes (one workload pod each), launched by Karpenter; its Nodes. */
const poolOf = async (
  prefix: string,
  size: number,
  annotations?: Record<string, string>,
  budgets?: ReadonlyArray<{ readonly nodes: string }>
) => {
  const pool = uniqueName(prefix).slice(0, 40)
  pools.push(pool)
  agents.push(reportAsAgents(core, `karpenter.sh/nodepool=${pool}`))
  await createNodePool(
    custom,
    karpenterNodePool(pool, {
      nodes: size + 3,
      ...(annotations ? { annotations } : {}),
      ...(budgets ? { budgets: [...budgets] } : {})
    })
  )
  await provisionNodes(apps, pool, size, { namespace: ns })
  const launched = await waitForPoolNodes(custom, core, pool, size)
  return { pool, nodes: launched.map((l) => l.node.metadata?.name ?? "") }
}

/** KernelReady=False on `node`, written with `client`'s credentials (the node's own, for an impostor). */
const kernelFalse = (node: string, client = core) =>
  patchNodeCondition(client, node, {
    type: "KernelReady",
    status: "False",
    reason: "ForkFailedOutOfPIDs",
    message: "fork failed: out of PIDs (test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

const XID = "NvidiaXID79Error"
/** AcceleratedHardwareReady=False on `node`, as its agent writes it for a GPU fault. */
const gpuFault = (node: string) =>
  patchNodeCondition(core, node, {
    type: "AcceleratedHardwareReady",
    status: "False",
    reason: XID,
    message: "GPU has fallen off the bus (test)",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

/** The node's GPUs, as the NVIDIA device plugin reports them (Karpenter's kwok instance types have none). */
const setGpus = (node: string, capacity: number, allocatable = capacity) =>
  core.patchNodeStatus(
    {
      name: node,
      body: {
        status: {
          capacity: { "nvidia.com/gpu": String(capacity) },
          allocatable: { "nvidia.com/gpu": String(allocatable) }
        }
      }
    },
    setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
  )

const podsOn = async (node: string) =>
  (await core.listNamespacedPod({ namespace: ns, fieldSelector: `spec.nodeName=${node}` })).items

const eventTime = async (node: string, reason: string) => {
  const e = (await nodeEvents(core, node, reason))[0]
  return Date.parse(String(e?.eventTime ?? e?.firstTimestamp ?? e?.metadata?.creationTimestamp ?? ""))
}

beforeAll(async () => {
  ns = await createTestNamespace(core, "ctl-karpenter")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  for (const a of agents) await a.stop()
  for (const pool of pools)
    await deleteNodePool({ custom, apps, core }, pool, { deployment: { namespace: ns, name: pool } }).catch(
      () => {}
    )
  await deleteNamespace(core, ns)
}, 240_000)

describe.skipIf(process.env.NODEMEND_KARPENTER === "0")("nodemend with Karpenter", () => {
  it("a Karpenter node: replacement NodeClaim Ready before the drain, old NodeClaim deleted, pods moved once, no extra capacity", async () => {
    const { pool, nodes } = await poolOf("nm-kr", 3)
    const target = nodes[0] ?? ""
    const [pod] = await podsOn(target)
    await createPdb(policy, ns, pool, 2)
    await start(configFor(pool))
    await kernelFalse(target)

    await waitForEvent(core, target, "RepairStarted")
    // Karpenter's finalizer stays on the broken node while it goes: nodemend never strips it.
    let sawDeleting: V1Node | undefined
    const ready = await waitFor(
      "replacement Ready",
      async () => {
        const n = await readNodeOrUndefined(core, target)
        if (n?.metadata?.deletionTimestamp !== undefined) sawDeleting = n
        return (await nodeEvents(core, target, "ReplacementReady"))[0]
      },
      { timeoutMs: 90_000, intervalMs: 200 }
    )
    expect(ready.message).toMatch(/NodeClaim/)
    await waitForEvent(core, target, "RepairSucceeded", 120_000)
    // Capacity first: the replacement was Ready before the pod was moved off the broken node.
    expect(await eventTime(target, "ReplacementReady")).toBeLessThanOrEqual(
      await eventTime(target, "TerminatingInstance")
    )
    const replacementClaims = (await listNodeClaims(custom, pool)).filter(
      (c) => c.metadata?.annotations?.["nodemend.io/replacement-of"] === target
    )
    expect(replacementClaims).toHaveLength(1)
    const replacement = replacementClaims[0]
    // Back to 3 NodeClaims (the broken one gone, one replacement: no second instance, no orphan), do-not-disrupt
    // lifted so consolidation treats the replacement like any node.
    const claims = (await listNodeClaims(custom, pool)).filter((c) => !c.metadata?.deletionTimestamp)
    expect(claims).toHaveLength(3)
    expect(replacement?.metadata?.annotations?.[DO_NOT_DISRUPT]).toBeUndefined()
    expect(await readNodeOrUndefined(core, target)).toBeUndefined()
    if (sawDeleting !== undefined) expect(sawDeleting.metadata?.finalizers).toContain(NODECLAIM_FINALIZER)
    // The pod moved once: its replacement runs on the new node (the only free one), no other pod was disturbed.
    const newNode = replacement === undefined ? undefined : await nodeOf(core, replacement)
    const moved = await waitFor(
      "workload pod Running on the replacement",
      async () => {
        const p = (await podsOn(newNode?.metadata?.name ?? "")).find((x) => x.status?.phase === "Running")
        return p
      },
      { timeoutMs: 60_000 }
    )
    expect(moved.metadata?.name).not.toBe(pod?.metadata?.name)
    for (const other of nodes.slice(1)) expect((await podsOn(other)).length).toBe(1)
  }, 240_000)

  it("a replacement not Ready in time: the fallback (removeFirst) drains anyway and says so; onNoCapacity fail keeps the node", async () => {
    const { pool, nodes } = await poolOf("nm-kf", 3)
    const [a, b] = nodes
    // 1 s is less than Karpenter needs to launch and register a kwok node: the replacement is never Ready in time.
    await start(configFor(pool, { replacement: { timeoutSeconds: 1 } }))
    await kernelFalse(a ?? "")
    const fallback = await waitForEvent(core, a ?? "", "ReplacementUnavailable", 60_000)
    expect(fallback[0]?.message).toMatch(/removeFirst/)
    await waitForEvent(core, a ?? "", "RepairSucceeded", 120_000)
    expect(await readNodeOrUndefined(core, a ?? "")).toBeUndefined()
    await killControllers(running, false)
    running.length = 0

    await start(configFor(pool, { replacement: { timeoutSeconds: 1, onNoCapacity: "fail" } }))
    await kernelFalse(b ?? "")
    const failedEv = await waitForEvent(core, b ?? "", "RepairFailed", 60_000)
    expect(failedEv[0]?.message).toMatch(/no replacement could be had/)
    // The replacement NodeClaim made for it is Karpenter's to consolidate again: do-not-disrupt lifted (issue #24).
    const claims = await listNodeClaims(custom, pool)
    expect(claims.length).toBeGreaterThan(2)
    for (const c of claims)
      expect([c.metadata?.name, c.metadata?.annotations?.[DO_NOT_DISRUPT]]).toEqual([
        c.metadata?.name,
        undefined
      ])
    // Kept for an operator: tainted, its pod still there, its NodeClaim not deleted.
    const kept = await readNodeOrUndefined(core, b ?? "")
    expect(kept?.metadata?.deletionTimestamp).toBeUndefined()
    expect(isTainted(kept)).toBe(true)
    expect(await podsOn(b ?? "")).toHaveLength(1)
  }, 240_000)

  it("an open breaker is one RepairBlocked Event on the NodePool object, not one per node or reconcile (#28 part 4)", async () => {
    const { pool, nodes } = await poolOf("nm-kbe", 3)
    // 20% of 3 allows 1 unhealthy node: two open the breaker.
    await start(configFor(pool, { maxUnhealthyPercent: 20 }))
    await kernelFalse(nodes[0] ?? "")
    await kernelFalse(nodes[1] ?? "")
    await waitForEvent(core, nodes[0] ?? "", "RepairBlocked", 30_000)
    await waitForEvent(core, nodes[1] ?? "", "RepairBlocked", 30_000)
    const np = await getNodePool(custom, pool)
    const onPool = async () =>
      (
        await core.listNamespacedEvent({
          namespace: "default",
          fieldSelector: `involvedObject.kind=NodePool,involvedObject.name=${pool},reason=RepairBlocked`
        })
      ).items
    await waitFor(
      "RepairBlocked on the NodePool",
      async () => ((await onPool()).length > 0 ? true : undefined),
      {
        timeoutMs: 30_000
      }
    )
    // Several requeues (breaker.requeueSeconds 2) of both nodes later: still the one Event.
    await sleep(8000)
    const events = await onPool()
    expect(events).toHaveLength(1)
    expect(events[0]?.involvedObject?.uid).toBe(np?.metadata?.uid)
    expect(events[0]?.reportingComponent).toBe("nodemend.io/repair-controller")
    expect(events[0]?.message).toMatch(
      /more than 20% of the nodes of this NodePool are unhealthy \(2 of 3, allowed 1\)/
    )
  }, 180_000)

  it("Karpenter path: replacements that come up with the same fault relapse; held after 2, with one RepairHeld on the NodePool (#28)", async () => {
    // Every replacement fails the health gate, so the first repair fails, keeping its in-flight slot for an
    // operator: the budget leaves room for the broken replacements' own (held) repairs.
    const { pool, nodes } = await poolOf("nm-krl", 3, undefined, [{ nodes: "100%" }])
    // The toleration outlasts a repair, so each relapse is on record before the relapsed node falls due.
    await start(
      configFor(pool, {
        policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 12 }],
        maxUnhealthyPercent: 100,
        relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 },
        // Karpenter may place every broken replacement in one zone; with 3 unhealthy there the failure-domain
        // breaker stands the zone down (it precedes the relapse hold in decide) and no RepairHeld comes. This test
        // is about the relapse hold; zoneBreaker.test.ts covers the stand-down.
        zoneBreaker: { enabled: false }
      })
    )
    // Every node Karpenter brings up for the pool from now on (nodemend's replacement NodeClaims) comes up with the
    // fault, as from a broken image: written here once it is Ready, as its agent would.
    const template = breakReplacements(core, `karpenter.sh/nodepool=${pool}`, new Set(nodes))
    try {
      await kernelFalse(nodes[0] ?? "")
      const held = await waitForHeldReplacement(core, () => template.faulted, 200_000)
      expect(held.message).toMatch(
        new RegExp(
          `2 nodes of pool ${pool} came back with ForkFailedOutOfPIDs within 10m of a repair \\(threshold 2\\)`
        )
      )
      expect(await nodeEvents(core, held.node, "RepairStarted")).toEqual([])
      const onPool = (
        await core.listNamespacedEvent({
          namespace: "default",
          fieldSelector: `involvedObject.kind=NodePool,involvedObject.name=${pool},reason=RepairHeld`
        })
      ).items
      expect(onPool).toHaveLength(1)
      expect(onPool[0]?.message).toMatch(/repairs of ForkFailedOutOfPIDs in this NodePool are held/)
    } finally {
      await template.fix()
    }
  }, 300_000)

  for (const [which, defect, failed] of [
    ["a GPU fault", (n: string) => gpuFault(n), `AgentCondition: AcceleratedHardwareReady=False (${XID})`],
    // Kwok has no instance types: the GPUs expected are the repaired node's (8), as the kwok provider reads them.
    [
      "a GPU missing from allocatable",
      (n: string) => setGpus(n, 8, 7),
      "GpuAllocatable: nvidia.com/gpu allocatable 7 of capacity 8"
    ]
  ] as const)
    it(`replacement NodeClaims that come up with ${which} are never capacity: 2 attempts, the repair fails, each a relapse (#41)`, async () => {
      const { pool, nodes } = await poolOf("nm-krh", 3, undefined, [{ nodes: "100%" }])
      const target = nodes[0] ?? ""
      for (const n of nodes) await setGpus(n, 8)
      const [pod] = await podsOn(target)
      await start(
        configFor(pool, {
          // The toleration outlasts both attempts, so both relapses hold the pool before a broken replacement's own
          // repair falls due.
          policies: [
            {
              conditionType: "AcceleratedHardwareReady",
              status: "False",
              tolerationSeconds: 12,
              action: "Replace"
            }
          ],
          maxUnhealthyPercent: 100,
          replacement: { timeoutSeconds: 90, healthTimeoutSeconds: 60, maxAttempts: 2 },
          relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 }
        })
      )
      const template = breakReplacements(core, `karpenter.sh/nodepool=${pool}`, new Set(nodes), defect)
      try {
        await gpuFault(target)
        await waitForEvent(core, target, "RepairFailed", 150_000)
        const unhealthy = (await nodeEvents(core, target, "ReplacementUnhealthy")).map((e) => e.message ?? "")
        expect(unhealthy).toHaveLength(2)
        for (const m of unhealthy) expect(m).toContain(failed)
        const broken = unhealthy.map((m) => /replacement (\S+) is not capacity/.exec(m)?.[1] ?? "?")
        expect(new Set(broken).size).toBe(2)
        expect([...broken].sort()).toEqual([...template.faulted].sort())
        // Never capacity: no ReplacementReady, no drain; the workload pod has not moved.
        expect(await nodeEvents(core, target, "ReplacementReady")).toEqual([])
        expect(await nodeEvents(core, target, "Drained")).toEqual([])
        expect((await podsOn(target)).map((p) => p.metadata?.uid)).toEqual([pod?.metadata?.uid])
        // Up to the bound: two replacement NodeClaims for the node, no third.
        const claims = (await listNodeClaims(custom, pool)).filter(
          (c) => c.metadata?.annotations?.["nodemend.io/replacement-of"] === target
        )
        expect(claims.length).toBeLessThanOrEqual(2)
        const cm = await core.readNamespacedConfigMap({ namespace: ns, name: ledgerConfigMapName(pool, XID) })
        const ledger = parseLedger(cm.data?.ledger ?? "")
        expect(ledger._tag).toBe("Success")
        if (ledger._tag === "Success")
          for (const b of broken)
            expect(ledger.success.relapses).toContainEqual(
              expect.objectContaining({ node: b, kind: "replacement", repairedNode: target })
            )
      } finally {
        await template.fix()
      }
    }, 300_000)

  it("nodemend.io/do-not-repair on a NodePool vetoes its nodes", async () => {
    const { pool, nodes } = await poolOf("nm-kv", 2, { "nodemend.io/do-not-repair": "true" })
    const target = nodes[0] ?? ""
    await start(configFor(pool))
    await kernelFalse(target)
    const vetoed = await waitForEvent(core, target, "RepairVetoed", 30_000)
    expect(vetoed[0]?.message).toMatch(/nodepool-annotation/)
    await sleep(2000)
    expect(isTainted(await readNodeOrUndefined(core, target))).toBe(false)
    expect(await nodeEvents(core, target, "RepairStarted")).toHaveLength(0)
  }, 180_000)

  it("a node Karpenter is already repairing is left alone (RepairDeferred, or its deletion waited out), never tainted or drained by nodemend", async () => {
    const { pool, nodes } = await poolOf("nm-kc", 2)
    const target = nodes[0] ?? ""
    // The PDB holds Karpenter's drain (up to its 45 s TGP), so its repair is still under way when nodemend decides.
    await createPdb(policy, ns, pool, 2)
    await start(configFor(pool))
    const longAgo = new Date(Date.now() - 120_000)
    await patchNodeCondition(core, target, {
      type: "KWOKUnhealthy",
      status: "True",
      reason: "Test",
      message: "Karpenter's own repair policy (30 s)",
      lastHeartbeatTime: new Date(),
      lastTransitionTime: longAgo
    })
    // Once Karpenter has taken the node (DisruptionReason Unhealthy on its NodeClaim), nodemend's condition is due.
    await waitFor(
      "Karpenter repairing the node",
      async () =>
        (await listNodeClaims(custom, pool)).find(
          (c) =>
            c.status?.nodeName === target &&
            c.status?.conditions?.some((x) => x.type === "DisruptionReason" && x.status === "True")
        ),
      { timeoutMs: 90_000, intervalMs: 500 }
    )
    await patchNodeCondition(core, target, {
      type: "KernelReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs",
      message: "fork failed: out of PIDs (test)",
      lastHeartbeatTime: new Date(),
      lastTransitionTime: longAgo
    })
    // The toleration (3 s) runs from nodemend's first sight of the condition (#37), not from the 2 minutes the node
    // wrote: by its expiry Karpenter may already be deleting the Node, which nodemend then leaves alone without a
    // word. Either way nodemend never starts, taints or drains.
    const outcome = await waitFor(
      "nodemend deferring to Karpenter, or the Node deleting",
      async () => {
        const deferred = await nodeEvents(core, target, "RepairDeferred")
        if (deferred.length > 0) return { deferred: deferred[0]?.message ?? "" }
        const n = await readNodeOrUndefined(core, target)
        return n === undefined || n.metadata?.deletionTimestamp !== undefined ? { deleting: true } : undefined
      },
      { timeoutMs: 30_000, intervalMs: 250 }
    )
    if ("deferred" in outcome) expect(outcome.deferred).toMatch(/Karpenter/)
    await sleep(5000)
    expect(await nodeEvents(core, target, "RepairStarted")).toHaveLength(0)
    expect(isTainted(await readNodeOrUndefined(core, target))).toBe(false)
    console.log(
      `Karpenter repairing: ${"deferred" in outcome ? "RepairDeferred" : "the Node deleting, left alone"}`
    )
  }, 180_000)

  it("unknown ownership is refused: a node that says it is Karpenter's with no NodeClaim behind it", async () => {
    const name = uniqueName("nm-ku").slice(0, 40)
    await createFakeNode(core, { name, labels: { "karpenter.sh/registered": "true", "nm-test": name } })
    await start({ ...configFor(name), nodeSelector: `nm-test=${name}` })
    await kernelFalse(name)
    const refused = await waitForEvent(core, name, "RepairRefused", 30_000)
    expect(refused[0]?.message).toMatch(/unknown owner/)
    expect(isTainted(await readNodeOrUndefined(core, name))).toBe(false)
    await core.deleteNode({ name }).catch(() => {})
  }, 60_000)

  /**
   * Karpenter frozen (SIGSTOP) while a NodeClaim it "launched" has a providerID and no Node yet: the window every new
   * Karpenter node has for its first 30-90 s on EC2, made to last the whole test. Unfrozen afterwards.
   */
  const withKarpenterFrozen = async <A>(body: () => Promise<A>): Promise<A> => {
    const pid = Number(readFileSync(join(dirname(kubeconfig), "pids", "karpenter.pid"), "utf8"))
    process.kill(pid, "SIGSTOP")
    try {
      return await body()
    } finally {
      process.kill(pid, "SIGCONT")
    }
  }

  it.each([
    ["the claim's providerID (another machine's)", (claim: string, _node: string) => `kwok://${claim}-node`],
    [
      "its own providerID, which an unregistered claim also carries",
      (_claim: string, node: string) => `kwok://${node}`
    ]
  ])(
    "a node with an unregistered NodeClaim's providerID, %s, is refused: nothing copied, drained or deleted",
    async (_, providerIDOf) => {
      // Issue #24: ownership used to follow the providerID to any NodeClaim without a Node yet, so node-e got the
      // claim deleted and its spec copied. Now the cloud vouches for the machine first (kwok: kwok://<the Node's
      // name>), and a claim owns only the Node Karpenter registered to it.
      const { pool } = await poolOf("nm-imp", 1)
      const source = (await listNodeClaims(custom, pool))[0]
      if (source === undefined) throw new Error(`no NodeClaim in ${pool}`)
      const victim = uniqueName("victim-claim").slice(0, 40)
      const impostor = uniqueName("node-e").slice(0, 40)
      const providerID = providerIDOf(victim, impostor)
      await start(configFor(pool))
      // Everything happens, is checked and is cleaned up while Karpenter is frozen: thawed, it would launch the
      // victim claim and register or garbage-collect what the test left behind.
      await withKarpenterFrozen(async () => {
        try {
          await createNodeClaim(custom, nodeClaimLike(source, await getNodePool(custom, pool), victim))
          await custom.patchClusterCustomObjectStatus(
            {
              group: "karpenter.sh",
              version: "v1",
              plural: "nodeclaims",
              name: victim,
              body: { status: { providerID } }
            },
            setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
          )
          const asNode = await nodeCore(kc, impostor)
          await asNode.createNode({
            body: {
              metadata: {
                name: impostor,
                labels: { "karpenter.sh/nodepool": pool, "kubernetes.io/hostname": impostor },
                annotations: { "kwok.x-k8s.io/node": "fake" }
              },
              spec: { providerID }
            }
          })
          await kernelFalse(impostor, asNode)
          const refused = await waitForEvent(core, impostor, "RepairRefused", 60_000)
          expect(refused[0]?.message).toMatch(
            providerID === `kwok://${impostor}` ? /NodeClaim .* registered no Node/ : /is not kwok:\/\//
          )
          await sleep(5000) // past the toleration and a few reconciles
          expect(await nodeEvents(core, impostor, "RepairStarted")).toEqual([])
          expect(isTainted(await readNodeOrUndefined(core, impostor))).toBe(false)
          for (const reason of ["TerminatingInstance", "LaunchingReplacement", "Drained"])
            expect([reason, await nodeEvents(core, impostor, reason)]).toEqual([reason, []])
          // Nobody but nodemend could touch the victim: still there, not being deleted, and no replacement copied
          // from its spec (the pool holds its own claim and the victim, nothing more).
          const still = await getNodeClaim(custom, victim)
          expect(still?.metadata?.deletionTimestamp).toBeUndefined()
          expect((await listNodeClaims(custom, pool)).map((c) => c.metadata?.name).sort()).toEqual(
            [source.metadata?.name, victim].sort()
          )
        } finally {
          await killControllers(running, false)
          running.length = 0
          await core.deleteNode({ name: impostor }).catch(() => {})
          // No finalizer yet (Karpenter adds it when it launches): gone at once.
          await deleteNodeClaim(custom, victim)
        }
      })
    },
    120_000
  )
})
