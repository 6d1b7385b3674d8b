// Integration tests proving the local cluster is real: upstream kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok processes, talked to over TLS with @kubernetes/client-node. Nothing is mocked.
import { request } from "node:https"
import {
  AdmissionregistrationV1Api,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  Watch,
  type V1Node,
  type V1NodeCondition
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  clients,
  condition,
  createFakeNode,
  createReadyFakeNode,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  deleteNodes,
  deleteRunNodes,
  errorCode,
  FAKE_NODE_LABEL,
  kubeconfigPath,
  patchNodeCondition,
  uniqueName,
  waitFor,
  waitForNodeCondition,
  KWOK_HEARTBEAT_INTERVAL_ANNOTATION,
  waitForPodPhase
} from "../src/index.ts"

const { kc, core, policy } = clients()
let ns = ""
let node = ""

beforeAll(async () => {
  ns = await createTestNamespace(core, "harness")
  // Heartbeats every 2 s (other Nodes report every 5 min): the heartbeat test below watches two.
  node =
    (await createFakeNode(core, { annotations: { [KWOK_HEARTBEAT_INTERVAL_ANNOTATION]: "2s" } })).metadata
      ?.name ?? ""
})

afterAll(async () => {
  await deleteNamespace(core, ns)
  await deleteRunNodes(core)
})

describe("control plane", () => {
  it("serves /version of the pinned upstream release over TLS with client-cert auth", async () => {
    const v = await kc.makeApiClient(VersionApi).getCode()
    expect(v.gitVersion).toBe("v1.37.2")
    expect(v.major).toBe("1")
    expect(v.minor).toBe("37")
    expect(kc.getCurrentCluster()?.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    expect(kubeconfigPath()).toMatch(/kubeconfig$/)
  })

  it("rejects anonymous requests and enforces RBAC for unprivileged identities", async () => {
    const server = kc.getCurrentCluster()?.server ?? ""
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server}/api/v1/nodes`, { rejectUnauthorized: false }, (r) => {
        r.resume()
        resolve(r.statusCode ?? 0)
      })
      req.on("error", reject)
      req.end()
    })
    expect(status).toBe(403) // system:anonymous may not list nodes
    const sa = `system:serviceaccount:${ns}:default`
    const err = await core.listNode({}, setHeaderOptions("Impersonate-User", sa)).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(errorCode(err)).toBe(403)
  })

  it("enforces a ValidatingAdmissionPolicy", async () => {
    const adm = kc.makeApiClient(AdmissionregistrationV1Api)
    const name = uniqueName("deny-marked")
    await adm.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: {
            resourceRules: [
              { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }
            ]
          },
          validations: [
            {
              expression: "!has(object.metadata.labels) || !('nodemend.io/deny' in object.metadata.labels)",
              message: "nodemend test policy denies marked ConfigMaps"
            }
          ]
        }
      }
    })
    await adm.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name },
        spec: {
          policyName: name,
          validationActions: ["Deny"],
          matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } }
        }
      }
    })
    try {
      const denied = await waitFor("policy to take effect", async () => {
        const cmName = uniqueName("cm")
        try {
          await core.createNamespacedConfigMap({
            namespace: ns,
            body: { metadata: { name: cmName, labels: { "nodemend.io/deny": "yes" } } }
          })
          return undefined // not enforced yet (policy informer still syncing)
        } catch (e) {
          return e
        }
      })
      expect(errorCode(denied)).toBe(422)
      expect(String((denied as { body?: unknown }).body)).toContain(
        "nodemend test policy denies marked ConfigMaps"
      )
      // Unmarked objects still pass.
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: uniqueName("ok") } } })
    } finally {
      await adm.deleteValidatingAdmissionPolicyBinding({ name })
      await adm.deleteValidatingAdmissionPolicy({ name })
    }
  })
})

describe("kwok nodes", () => {
  it("a kwok Node becomes Ready", async () => {
    const n = await waitForNodeCondition(core, node, "Ready", "True")
    expect(n.metadata?.labels?.[FAKE_NODE_LABEL]).toBe("fake")
    expect(n.status?.phase).toBe("Running")
    expect(n.status?.nodeInfo?.kubeletVersion).toMatch(/^kwok-/)
    // kwok also keeps the node's Lease in kube-node-lease, like a kubelet.
    const coord = await import("@kubernetes/client-node").then((m) => kc.makeApiClient(m.CoordinationV1Api))
    const lease = await waitFor("node lease", () =>
      coord.readNamespacedLease({ name: node, namespace: "kube-node-lease" })
    )
    expect(lease.spec?.holderIdentity).toBeTruthy()
    expect(lease.spec?.renewTime).toBeTruthy()
  })

  it("createReadyFakeNode returns the Node once kwok reports it Ready", async () => {
    const n = await createReadyFakeNode(core, { labels: { "nodemend.io/harness": "ready" } })
    expect(condition(n, "Ready")?.status).toBe("True")
    expect(n.metadata?.labels?.["nodemend.io/harness"]).toBe("ready")
  })

  it("a pod scheduled onto it by kube-scheduler reaches Running", async () => {
    await waitForNodeCondition(core, node)
    const pod = await createTestPod(core, ns, { nodeName: node })
    const running = await waitForPodPhase(core, ns, pod.metadata?.name ?? "", "Running")
    expect(running.spec?.nodeName).toBe(node)
    expect(running.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True")
    expect(running.status?.podIP).toBeTruthy()
  })

  it("a custom Node condition survives kwok's heartbeats, and a watch sees it", async () => {
    await waitForNodeCondition(core, node)
    const events: { type: string; node: V1Node }[] = []
    const ctl = await new Watch(kc).watch(
      "/api/v1/nodes",
      { fieldSelector: `metadata.name=${node}`, timeoutSeconds: 25 },
      (type, obj) => events.push({ type, node: obj as V1Node }),
      () => undefined
    )
    try {
      const t0 = new Date(Math.floor(Date.now() / 1000) * 1000)
      const cond: V1NodeCondition = {
        type: "NodemendTestHealthy",
        status: "False",
        reason: "NM_TEST_0001",
        message: "injected by cluster-harness test",
        lastHeartbeatTime: t0,
        lastTransitionTime: t0
      }
      await patchNodeCondition(core, node, cond)

      // The watch delivers the patched object.
      const seen = await waitFor("watch MODIFIED with the custom condition", () =>
        events.find(
          (e) => e.type === "MODIFIED" && condition(e.node, "NodemendTestHealthy")?.reason === "NM_TEST_0001"
        )
      )
      expect(condition(seen.node, "NodemendTestHealthy")?.status).toBe("False")

      // Wait for two kwok heartbeats after the patch (Ready.lastHeartbeatTime moves past t0 twice).
      const beats = new Set<number>()
      await waitFor(
        "two kwok heartbeats after the patch",
        async () => {
          const n = await core.readNode({ name: node })
          const hb = condition(n, "Ready")?.lastHeartbeatTime
          if (hb && new Date(hb).getTime() > t0.getTime()) beats.add(new Date(hb).getTime())
          return beats.size >= 2
        },
        { timeoutMs: 45_000, intervalMs: 500 }
      )
      const after = await core.readNode({ name: node })
      const kept = condition(after, "NodemendTestHealthy")
      expect(kept?.status).toBe("False")
      expect(kept?.reason).toBe("NM_TEST_0001")
      expect(new Date(kept?.lastTransitionTime ?? 0).getTime()).toBe(t0.getTime())
      expect(condition(after, "Ready")?.status).toBe("True")
      // The heartbeats themselves arrived on the watch as well.
      expect(events.filter((e) => e.type === "MODIFIED").length).toBeGreaterThanOrEqual(2)
    } finally {
      ctl.abort()
    }
  })
})

describe("deleting many Nodes", () => {
  it("deletes them a page at a time, leaving one held by a finalizer to its owner", async () => {
    const set = uniqueName("many").slice(0, 50)
    const labelSelector = `nodemend.io/delete-set=${set}`
    const labels = { "nodemend.io/delete-set": set }
    const standing = async () =>
      (await core.listNode({ labelSelector })).items.filter(
        (n) => n.metadata?.deletionTimestamp === undefined
      )
    await Promise.all(
      ["a", "b", "c", "d", "e"].map((i) =>
        createFakeNode(core, { name: `${set}-${i}`, labels, managed: false })
      )
    )
    // Named to be listed last (lists are in name order), so the first page holds two standing Nodes.
    const held = `${set}-z`
    await createFakeNode(core, { name: held, labels, managed: false })
    await core.patchNode(
      { name: held, body: { metadata: { finalizers: ["nodemend.io/test-hold"] } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await core.deleteNode({ name: held })
    // The API server deletes one page of the collection per DELETE: what deleteNodes relies on.
    await core.deleteCollectionNode({ labelSelector, limit: 2 })
    expect(await standing()).toHaveLength(3)
    // The held Node, already being deleted, does not keep deleteNodes asking again.
    await deleteNodes(core, labelSelector, 2)
    expect(await standing()).toEqual([])
    expect((await core.listNode({ labelSelector })).items.map((n) => n.metadata?.name)).toEqual([held])
    await core.patchNode(
      { name: held, body: { metadata: { finalizers: null } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
  })
})

describe("disruption", () => {
  async function runningPods(app: string, count: number): Promise<string[]> {
    const names: string[] = []
    for (let i = 0; i < count; i++) {
      const p = await createTestPod(core, ns, { nodeName: node, labels: { app } })
      names.push(p.metadata?.name ?? "")
    }
    await Promise.all(names.map((n) => waitForPodPhase(core, ns, n, "Running")))
    return names
  }

  /** A PDB keeping at least one pod labelled app=<app>: minAvailable, since maxUnavailable needs a controller's scale and the pods are bare. */
  async function createPdb(app: string): Promise<string> {
    const name = uniqueName("pdb")
    await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } }
    })
    return name
  }

  async function pdbSettled(name: string, expectedPods: number) {
    return waitFor(`PDB ${name} status`, async () => {
      const pdb = await policy.readNamespacedPodDisruptionBudget({ name, namespace: ns })
      const s = pdb.status
      return s && s.observedGeneration === pdb.metadata?.generation && s.expectedPods === expectedPods
        ? pdb
        : undefined
    })
  }

  it("kube-controller-manager fills a PDB's status.disruptionsAllowed", async () => {
    await waitForNodeCondition(core, node)
    const app = uniqueName("web")
    await runningPods(app, 3)
    const pdb = await pdbSettled(await createPdb(app), 3)
    expect(pdb.status?.currentHealthy).toBe(3)
    expect(pdb.status?.desiredHealthy).toBe(1)
    expect(pdb.status?.disruptionsAllowed).toBe(2)
  })

  it("evicting a pod whose PDB allows 0 disruptions returns 429; allowed evictions succeed", async () => {
    await waitForNodeCondition(core, node)
    const app = uniqueName("db")
    const [pod] = await runningPods(app, 1)
    const name = await createPdb(app)
    const pdb = await pdbSettled(name, 1)
    expect(pdb.status?.disruptionsAllowed).toBe(0)
    const evict = (podName: string) =>
      core.createNamespacedPodEviction({
        name: podName,
        namespace: ns,
        body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: podName, namespace: ns } }
      })
    const err = await evict(pod ?? "").then(
      () => undefined,
      (e: unknown) => e
    )
    expect(errorCode(err)).toBe(429)
    expect(String((err as { body?: unknown }).body)).toContain("disruption budget")

    // Relax the budget: once the controller recomputes it, the same eviction goes through and the pod goes away.
    await policy.patchNamespacedPodDisruptionBudget(
      { name, namespace: ns, body: { spec: { minAvailable: 0 } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await waitFor("PDB to allow 1", async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name, namespace: ns })
      return p.status?.observedGeneration === p.metadata?.generation && p.status?.disruptionsAllowed === 1
    })
    await evict(pod ?? "")
    await waitFor("evicted pod to be gone", async () =>
      core.readNamespacedPod({ name: pod ?? "", namespace: ns }).then(
        () => false,
        (e: unknown) => errorCode(e) === 404
      )
    )
  })
})

// Slow controllers run concurrently so the suite takes as long as the slowest of them.
describe.concurrent("controllers that act after a delay", () => {
  it("kube-controller-manager's node lifecycle controller marks a Node whose heartbeats stop Unknown", async () => {
    // A Node kwok does not manage: we post one Ready=True status like a kubelet would, then go silent.
    // After --node-monitor-grace-period (20 s here) the node lifecycle controller sets Ready=Unknown and
    // taints the node unreachable: the signal a repair controller acts on.
    const silent = (await createFakeNode(core, { managed: false })).metadata?.name ?? ""
    const now = new Date()
    await patchNodeCondition(core, silent, {
      type: "Ready",
      status: "True",
      reason: "KubeletReady",
      message: "posted once by the test",
      lastHeartbeatTime: now,
      lastTransitionTime: now
    })
    const n = await waitForNodeCondition(core, silent, "Ready", "Unknown", {
      timeoutMs: 50_000,
      intervalMs: 1000
    })
    expect(condition(n, "Ready")?.reason).toBe("NodeStatusUnknown")
    const tainted = await waitFor(
      "unreachable taint",
      async () => {
        const cur = await core.readNode({ name: silent })
        return cur.spec?.taints?.some((t) => t.key === "node.kubernetes.io/unreachable") ? cur : undefined
      },
      { timeoutMs: 20_000 }
    )
    expect(tainted.spec?.taints?.find((t) => t.key === "node.kubernetes.io/unreachable")).toBeTruthy()
  }, 90_000)

  it("kube-controller-manager's pod garbage collector deletes pods of a deleted Node", async () => {
    const doomed = (await createFakeNode(core)).metadata?.name ?? ""
    await waitForNodeCondition(core, doomed)
    const pod = (await createTestPod(core, ns, { bindTo: doomed })).metadata?.name ?? ""
    const running = await waitForPodPhase(core, ns, pod, "Running")
    expect(running.spec?.nodeName).toBe(doomed)
    await core.deleteNode({ name: doomed })
    // podgc deletes pods bound to a node that no longer exists after a 40 s quarantine (checked every 20 s),
    // marking them DisruptionTarget/DeletionByPodGC first: seen on the way out, or the pod is simply gone.
    let marked: string | undefined
    const gone = await waitFor(
      "orphaned pod to be garbage collected",
      async (seen) =>
        core.readNamespacedPod({ name: pod, namespace: ns }).then(
          (p) => {
            marked = p.status?.conditions?.find((c) => c.type === "DisruptionTarget")?.reason ?? marked
            seen(p.status?.phase)
            return undefined
          },
          (e: unknown) => {
            if (errorCode(e) === 404) return 404
            throw e
          }
        ),
      { timeoutMs: 85_000, intervalMs: 1000 }
    )
    expect(gone).toBe(404)
    if (marked !== undefined) expect(marked).toBe("DeletionByPodGC")
  }, 90_000)

  it("kube-controller-manager's garbage collector deletes dependents of a deleted owner", async () => {
    const owner = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: uniqueName("owner") } }
    })
    const dependent = uniqueName("dependent")
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: dependent,
          ownerReferences: [
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              name: owner.metadata?.name ?? "",
              uid: owner.metadata?.uid ?? ""
            }
          ]
        }
      }
    })
    // A ConfigMap owned by nothing, next to it: the collector deletes dependents, not whatever is there.
    const bystander = uniqueName("bystander")
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: bystander } } })
    expect(
      (await core.readNamespacedConfigMap({ name: dependent, namespace: ns })).metadata?.uid
    ).toBeDefined()
    await core.deleteNamespacedConfigMap({ name: owner.metadata?.name ?? "", namespace: ns })
    const gone = await waitFor("dependent to be garbage collected", async () =>
      core.readNamespacedConfigMap({ name: dependent, namespace: ns }).then(
        () => undefined,
        (e: unknown) => {
          if (errorCode(e) === 404) return 404
          throw e
        }
      )
    )
    expect(gone).toBe(404)
    expect((await core.readNamespacedConfigMap({ name: bystander, namespace: ns })).metadata?.name).toBe(
      bystander
    )
  })
})
