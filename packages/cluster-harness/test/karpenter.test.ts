// The local Karpenter (kwok provider, sigs.k8s.io/karpenter v1.15, started by tools/cluster/cluster.mjs `up` with
// FEATURE_GATES=NodeRepair=true) against the real control plane: a NodePool provisions Nodes; a NodeClaim made by
// hand from one of them (what nodemend's capacity-before-removal will create) is launched like Karpenter's own;
// deleting a NodeClaim removes its Node through Karpenter's finalizer; and what Karpenter's own repair writes on a
// NodeClaim it repairs (KWOKUnhealthy=True, 30 s toleration).
import type { V1Node } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  clients,
  createTestNamespace,
  DISRUPTED_TAINT,
  DO_NOT_DISRUPT,
  deleteNamespace,
  deleteNodeClaim,
  deleteNodePool,
  createNodeClaim,
  createNodePool,
  getNodeClaim,
  getNodePool,
  karpenterClients,
  karpenterNodePool,
  type LaunchedNodeClaim,
  listNodeClaims,
  NODECLAIM_FINALIZER,
  NODEPOOL_LABEL,
  nodeClaimCondition,
  nodeClaimLike,
  nodeOf,
  patchNodeCondition,
  provisionNodes,
  UNREGISTERED_TAINT,
  uniqueName,
  waitFor,
  waitForNodeClaimGone,
  waitForNodeClaimLaunched,
  waitForPoolNodes
} from "../src/index.ts"

const { kc, core } = clients()
const { custom, apps } = karpenterClients(kc)
const pool = uniqueName("np")
let ns = ""
let launched: LaunchedNodeClaim[] = []

const taintKeys = (node: V1Node | undefined) => (node?.spec?.taints ?? []).map((t) => t.key)

describe.skipIf(process.env.NODEMEND_KARPENTER === "0")("local Karpenter (kwok provider)", () => {
  beforeAll(async () => {
    ns = await createTestNamespace(core, "karpenter")
    await createNodePool(custom, karpenterNodePool(pool, { nodes: 10 }))
    await provisionNodes(apps, pool, 3, { namespace: ns })
  })

  afterAll(async () => {
    await deleteNodePool({ custom, apps, core }, pool, { deployment: { namespace: ns, name: pool } })
    await deleteNamespace(core, ns)
  }, 180_000)

  it("a NodePool of 3 nodes comes up: NodeClaims Initialized, Nodes Ready, registered", async () => {
    launched = await waitForPoolNodes(custom, core, pool, 3)
    for (const { claim, node } of launched) {
      expect(claim.metadata?.finalizers).toContain(NODECLAIM_FINALIZER)
      expect(node.metadata?.labels?.[NODEPOOL_LABEL]).toBe(pool)
      expect(node.metadata?.labels?.["kwok.x-k8s.io/node"]).toBe("fake")
      expect(taintKeys(node)).not.toContain(UNREGISTERED_TAINT)
    }
  }, 150_000)

  it("a NodeClaim made by hand from one of the pool's is launched by Karpenter and Initialized", async () => {
    const source = launched[0]?.claim
    expect(source).toBeDefined()
    if (!source) return
    const nodePool = await getNodePool(custom, pool)
    const name = uniqueName(`${pool}-byhand`)
    await createNodeClaim(
      custom,
      nodeClaimLike(source, nodePool, name, { annotations: { [DO_NOT_DISRUPT]: "true" } })
    )
    const { claim, node } = await waitForNodeClaimLaunched(custom, core, name)
    for (const type of ["Launched", "Registered", "Initialized"]) {
      expect(nodeClaimCondition(claim, type)?.status, type).toBe("True")
    }
    expect(claim.metadata?.finalizers).toContain(NODECLAIM_FINALIZER)
    expect(claim.status?.providerID).toBe(`kwok://${node.metadata?.name}`)
    expect(node.metadata?.labels?.[NODEPOOL_LABEL]).toBe(pool)
    expect(taintKeys(node)).not.toContain(UNREGISTERED_TAINT)
    expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True")
    // Karpenter keeps it: no deletion, and the pool now counts 4 NodeClaims (no extra launch for it).
    await new Promise((r) => setTimeout(r, 3000))
    expect((await getNodeClaim(custom, name))?.metadata?.deletionTimestamp).toBeUndefined()
    expect((await listNodeClaims(custom, pool)).length).toBe(4)

    // Deleting a NodeClaim removes its Node: Karpenter's termination finalizer, nothing stripped by us.
    expect(node.metadata?.finalizers).toContain(NODECLAIM_FINALIZER)
    await deleteNodeClaim(custom, name)
    await waitForNodeClaimGone(custom, core, name, node.metadata?.name)
  }, 150_000)

  it("waitForPoolNodes trims a launched, empty extra NodeClaim (Karpenter launching one more than the pods need)", async () => {
    const source = launched[0]?.claim
    if (!source) throw new Error("no NodeClaim from the first test")
    const nodePool = await getNodePool(custom, pool)
    const extra = uniqueName(`${pool}-extra`)
    await createNodeClaim(custom, nodeClaimLike(source, nodePool, extra))
    const { node } = await waitForNodeClaimLaunched(custom, core, extra)
    const pooled = await waitForPoolNodes(custom, core, pool, 3)
    // The 3 that hold the pods, not the empty one, which is deleted (Karpenter's finalizer removes its Node).
    expect(pooled.map((l) => l.claim.metadata?.name).sort()).toEqual(
      launched.map((l) => l.claim.metadata?.name).sort()
    )
    await waitForNodeClaimGone(custom, core, extra, node.metadata?.name)
  }, 150_000)

  it("Karpenter's own repair (KWOKUnhealthy=True, 30 s): what it writes on the NodeClaim, then a replacement", async () => {
    const victim = launched[1]
    expect(victim).toBeDefined()
    if (!victim) return
    const claimName = victim.claim.metadata?.name ?? ""
    const nodeName = victim.node.metadata?.name ?? ""
    const t0 = Date.now()
    await patchNodeCondition(core, nodeName, {
      type: "KWOKUnhealthy",
      status: "True",
      reason: "Test",
      message: "set by karpenter.test.ts",
      lastHeartbeatTime: new Date(),
      lastTransitionTime: new Date()
    })
    const seen: string[] = []
    const note = (what: string) => {
      if (!seen.some((s) => s.endsWith(` ${what}`)))
        seen.push(`+${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`)
    }
    let reasonCondition: ReturnType<typeof nodeClaimCondition>
    await waitFor(
      `NodeClaim ${claimName} repaired (gone)`,
      async () => {
        const claim = await getNodeClaim(custom, claimName)
        if (claim === undefined) {
          note("NodeClaim gone")
          return true
        }
        const cond = nodeClaimCondition(claim, "DisruptionReason")
        if (cond) {
          reasonCondition ??= cond
          note(`DisruptionReason status=${cond.status} reason=${cond.reason} message=${cond.message}`)
        }
        if (claim.metadata?.deletionTimestamp) note("NodeClaim deletionTimestamp set")
        const node = await nodeOf(core, claim)
        for (const t of node?.spec?.taints ?? []) {
          if (t.key.startsWith("karpenter.sh/")) note(`Node taint ${t.key}:${t.effect}`)
        }
        if (node?.metadata?.deletionTimestamp) note("Node deletionTimestamp set")
        const others = (await listNodeClaims(custom, pool)).filter((c) => c.metadata?.name !== claimName)
        if (others.length > 2) note(`replacement NodeClaim created (${others.length} others)`)
        return false
      },
      { timeoutMs: 150_000, intervalMs: 250 }
    )
    console.log(`Karpenter repair of ${nodeName} (NodeClaim ${claimName}):\n  ${seen.join("\n  ")}`)
    expect(reasonCondition?.status).toBe("True")
    expect(reasonCondition?.reason).toBe("Unhealthy")
    expect(seen.some((s) => s.includes(`Node taint ${DISRUPTED_TAINT}:NoSchedule`))).toBe(true)
    // The pool is back to 3 launched Nodes: the replacement Karpenter launched before deleting the broken one.
    launched = await waitForPoolNodes(custom, core, pool, 3)
  }, 240_000)
})
