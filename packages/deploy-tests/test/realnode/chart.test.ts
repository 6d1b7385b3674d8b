// The Helm chart installed with the images `npm run images` built, on the local cluster's real node
// (kubelet + containerd + runc): the workloads run as shipped, with their shipped securityContexts, RBAC and
// admission policies, and in-cluster credentials (service-account tokens, the `kubernetes` Service through
// kube-proxy).
import { writeFileSync } from "node:fs"
import { existsSync, statSync } from "node:fs"
import type { V1ClusterRole, V1Node, V1Pod, V1PolicyRule, V1Role } from "@kubernetes/client-node"
import { createReadyFakeNode, deleteNode, errorCode, RUN_ID, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NODE_BUNDLE_DIR, nodeBundleName } from "../../../agent/src/diagnostics/Delivery.ts"
import { startUploadServer, type UploadServer } from "../../../agent/test/diagnostics/cluster/uploadServer.ts"
import {
  AGENT_NS,
  admin,
  asToken,
  CHART_VALUES,
  CONTROLLER_NS,
  installChart,
  podToken,
  REAL_NODE,
  readyPods,
  uninstallChart
} from "./support.ts"

let controllers: V1Pod[]
let agent: V1Pod
let uploads: UploadServer

beforeAll(async () => {
  // Stands in for S3. The agent runs with hostNetwork, so the host's loopback is its own; plain http is
  // allowed only to a loopback IP, and only when the allowlist names it.
  uploads = await startUploadServer()
  installChart({
    ...CHART_VALUES,
    agent: { config: { diagnostics: { destinationAllowlist: [`${uploads.base}/bucket/`] } } }
  })
  controllers = await readyPods(CONTROLLER_NS, "nodemend-controller", 2)
  agent = (await readyPods(AGENT_NS, "nodemend-agent", 1))[0]!
}, 300_000)
afterAll(async () => {
  await uploads.close()
  uninstallChart()
  // What the controller made at run time, which helm does not own: its Lease.
  await admin()
    .leases.deleteNamespacedLease({ name: "nodemend-controller", namespace: CONTROLLER_NS })
    .catch(() => undefined)
}, 180_000)

const metrics = async (pod: V1Pod) => {
  const res = await fetch(`http://${pod.status!.podIP}:8080/metrics`)
  expect(res.status).toBe(200)
  return res.text()
}

describe("the controller Deployment on the real node", () => {
  it("runs both replicas on the real node, non-root with a read-only root filesystem", () => {
    expect(controllers.map((p) => p.spec?.nodeName)).toEqual([REAL_NODE, REAL_NODE])
    for (const p of controllers) {
      expect(p.spec?.securityContext?.runAsUser).toBe(65532)
      expect(p.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem).toBe(true)
    }
  })

  it("elects exactly one leader through the Lease, with in-cluster credentials, and says so in its metrics", async () => {
    const { leases } = admin()
    const names = controllers.map((p) => p.metadata!.name!)
    const holder = await waitFor(
      "the controller's Lease held by one of its pods",
      async () => {
        const lease = await leases.readNamespacedLease({
          name: "nodemend-controller",
          namespace: CONTROLLER_NS
        })
        const h = lease.spec?.holderIdentity
        return h && names.includes(h) ? h : undefined
      },
      // A Lease an earlier install left is taken over once it expires (leaseDurationSeconds 15).
      { timeoutMs: 60_000, intervalMs: 500 }
    )
    // Scraped from each pod IP, as Prometheus would: the holder reports leader 1; the stand-by does not.
    const leader = controllers.find((p) => p.metadata!.name === holder)!
    const standBy = controllers.find((p) => p.metadata!.name !== holder)!
    // Leader, and its Lease renewals (every 2 s, from the lease keeper's thread: ADR 0020) went through the API server
    // (the `kubernetes` Service, kube-proxy's rules): waited for, since a leader scraped right after it took the Lease
    // has not renewed it yet.
    const text = await waitFor("the leader's metrics, with a Lease renewal", async () => {
      const t = await metrics(leader)
      return /^nodemend_controller_leader 1$/m.test(t) &&
        /^nodemend_controller_lease_renewal_seconds_count [1-9]/m.test(t)
        ? t
        : undefined
    })
    expect(text).toMatch(/^nodemend_controller_leader 1$/m)
    expect(await metrics(standBy)).not.toMatch(/^nodemend_controller_leader 1$/m)
  })
})

describe("the agent DaemonSet on the real node", () => {
  it("is Ready on the real node with a read-only root filesystem and the host read-only", () => {
    expect(agent.spec?.nodeName).toBe(REAL_NODE)
    const c = agent.spec!.containers[0]!
    expect(c.securityContext?.readOnlyRootFilesystem).toBe(true)
    expect(c.volumeMounts?.find((m) => m.mountPath === "/host")?.readOnly).toBe(true)
  })

  it("turns a soft lockup written to the real /dev/kmsg into a SoftLockup Event on the real Node, leaving kubelet's Ready alone", async () => {
    const { core } = admin()
    const readyBefore = (await core.readNode({ name: REAL_NODE })).status?.conditions?.find(
      (c) => c.type === "Ready"
    )
    // A duration no other line has: the Event's message carries it ("CPU stuck for <n>s").
    const seconds = 1000 + Math.floor(Math.random() * 8000)
    const written = Date.now()
    writeFileSync(
      "/dev/kmsg",
      `<4>watchdog: BUG: soft lockup - CPU#0 stuck for ${seconds}s! [nm-${RUN_ID}:4242]\n`
    )
    const event = await waitFor(
      "the agent's SoftLockup Event",
      async () =>
        (
          await core.listNamespacedEvent({
            namespace: "default",
            fieldSelector: `involvedObject.kind=Node,involvedObject.name=${REAL_NODE},reason=SoftLockup`
          })
        ).items.find((e) => e.message?.includes(`${seconds}s`)),
      { timeoutMs: 20_000, intervalMs: 100 }
    )
    const latencyMs = Date.now() - written
    console.log(`[realnode] /dev/kmsg soft lockup -> Event on the API server: ${latencyMs} ms`)
    expect(event.reportingComponent ?? event.source?.component).toBe("nodemend.io/agent")
    expect(latencyMs).toBeLessThan(10_000)
    const readyAfter = (await core.readNode({ name: REAL_NODE })).status?.conditions?.find(
      (c) => c.type === "Ready"
    )
    expect(readyAfter?.status).toBe("True")
    expect(readyAfter?.lastTransitionTime).toEqual(readyBefore?.lastTransitionTime)
  })

  it("delivers a NodeDiagnostic bundle to the node (destination: node) with the shipped securityContext", async () => {
    const bundle = `/${NODE_BUNDLE_DIR}/${nodeBundleName(REAL_NODE)}`
    const requested = Date.now()
    const completed = await capture("node")
    expect(completed.reason, completed.message).not.toBe("Failure")
    // On the host, where the kubelet's /logs/ serves it: written through the read-write bundle mount.
    expect(existsSync(bundle)).toBe(true)
    expect(statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(requested - 1000)
  })

  it("uploads a NodeDiagnostic bundle to an allowlisted URL, spooled in its writable /tmp", async () => {
    const key = `/bucket/${nodeBundleName(REAL_NODE)}`
    const completed = await capture(`${uploads.base}${key}`)
    expect(completed.reason, completed.message).not.toBe("Failure")
    const body = uploads.objects.get(key)
    expect(body, "the uploaded bundle").toBeDefined()
    // A gzip stream (the tar.gz), not an empty or error body.
    expect([body![0], body![1]]).toEqual([0x1f, 0x8b])
  })
})

const ND = { group: "nodemend.io", version: "v1alpha1", plural: "nodediagnostics" }

/** Creates the real node's NodeDiagnostic for `destination`, waits for its completed capture, deletes it. */
const capture = async (destination: string) => {
  const { custom } = admin()
  await custom.createClusterCustomObject({
    ...ND,
    body: {
      apiVersion: "nodemend.io/v1alpha1",
      kind: "NodeDiagnostic",
      metadata: { name: REAL_NODE },
      spec: { logCapture: { destination, categories: ["Base"] } }
    }
  })
  try {
    return await waitFor(
      `the NodeDiagnostic's completed capture (${destination})`,
      async () => {
        const nd = (await custom.getClusterCustomObject({ ...ND, name: REAL_NODE })) as {
          status?: { captureStatuses?: { state: { completed?: { reason: string; message: string } } }[] }
        }
        return nd.status?.captureStatuses?.[0]?.state.completed
      },
      { timeoutMs: 120_000, intervalMs: 500 }
    )
  } finally {
    await custom.deleteClusterCustomObject({ ...ND, name: REAL_NODE }).catch(() => undefined)
    await waitFor(
      "the NodeDiagnostic gone",
      () =>
        custom.getClusterCustomObject({ ...ND, name: REAL_NODE }).then(
          () => false,
          (e) => errorCode(e) === 404
        ),
      { timeoutMs: 30_000 }
    )
  }
}

describe("the agent restarted on a node whose conditions are current", () => {
  it("is Ready again within seconds, not after the next heartbeat", async () => {
    const { core } = admin()
    const old = agent.metadata!.name!
    const deleted = Date.now()
    await core.deleteNamespacedPod({ name: old, namespace: AGENT_NS, gracePeriodSeconds: 5 })
    agent = await waitFor(
      "the new agent pod Ready",
      async () =>
        (
          await core.listNamespacedPod({
            namespace: AGENT_NS,
            labelSelector: "app.kubernetes.io/name=nodemend-agent"
          })
        ).items.find(
          (p) =>
            p.metadata?.name !== old &&
            p.spec?.nodeName === REAL_NODE &&
            p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
        ),
      // The old agent wrote its conditions moments ago; the heartbeat is 300 s, readiness must not wait for it.
      { timeoutMs: 45_000, intervalMs: 500 }
    )
    console.log(`[realnode] agent pod deleted -> replacement Ready: ${Date.now() - deleted} ms`)
    // Within seconds of its container starting, from the kubelet's own times (whole seconds): far below the 300 s
    // heartbeat it must not wait for.
    const readyAt = Date.parse(
      String(agent.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime)
    )
    const startedAt = Date.parse(String(agent.status?.containerStatuses?.[0]?.state?.running?.startedAt))
    expect(readyAt - startedAt).toBeGreaterThanOrEqual(0)
    expect(readyAt - startedAt).toBeLessThan(30_000)
  })
})

/** Every (verb, resource) a role grants, as SelfSubjectAccessReview attributes. */
const grants = (rules: V1PolicyRule[], namespace?: string) =>
  rules.flatMap((r) =>
    (r.apiGroups ?? [""]).flatMap((group) =>
      (r.resources ?? []).flatMap((res) =>
        r.verbs.flatMap((verb) =>
          (r.resourceNames?.length ? r.resourceNames : [undefined]).map((name) => {
            const [resource, subresource] = res.split("/")
            return { group, resource, subresource, verb, name, namespace }
          })
        )
      )
    )
  )

/** What the chart's (Cluster)RoleBindings grant a service account, read back from the cluster. */
const grantsOf = async (namespace: string, serviceAccount: string) => {
  const { rbac } = admin()
  const bound = (subjects?: { kind: string; name: string; namespace?: string }[]) =>
    subjects?.some(
      (s) => s.kind === "ServiceAccount" && s.name === serviceAccount && s.namespace === namespace
    )
  const out = []
  for (const b of (await rbac.listClusterRoleBinding()).items.filter((b) => bound(b.subjects))) {
    const role: V1ClusterRole = await rbac.readClusterRole({ name: b.roleRef.name })
    out.push(...grants(role.rules ?? []))
  }
  for (const b of (await rbac.listRoleBindingForAllNamespaces()).items.filter((b) => bound(b.subjects))) {
    const ns = b.metadata!.namespace!
    const role: V1Role | V1ClusterRole =
      b.roleRef.kind === "Role"
        ? await rbac.readNamespacedRole({ name: b.roleRef.name, namespace: ns })
        : await rbac.readClusterRole({ name: b.roleRef.name })
    out.push(...grants(role.rules ?? [], ns))
  }
  return out
}

const allowed = async (token: string, attrs: Record<string, string | undefined>) =>
  (
    await asToken(token).authz.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: attrs } }
    })
  ).status?.allowed

describe("the pods' own tokens against the API server", () => {
  it("the controller pod's token has every verb its RBAC grants, reads its Lease, and cannot read Secrets", async () => {
    const token = podToken(controllers[0]!)
    const needed = await grantsOf(CONTROLLER_NS, "nodemend-controller")
    expect(needed.length).toBeGreaterThan(10)
    for (const g of needed) expect([g, await allowed(token, g)]).toEqual([g, true])
    const client = asToken(token)
    await client.leases.readNamespacedLease({ name: "nodemend-controller", namespace: CONTROLLER_NS })
    const secrets = await client.core.listSecretForAllNamespaces().then(
      () => 200,
      (e) => errorCode(e)
    )
    expect(secrets).toBe(403)
  })

  it("the agent pod's token has every verb its RBAC grants, yet the admission policy keeps it to its own Node", async () => {
    const token = podToken(agent)
    const needed = await grantsOf(AGENT_NS, "nodemend-agent")
    expect(needed.length).toBeGreaterThan(3)
    for (const g of needed) expect([g, await allowed(token, g)]).toEqual([g, true])
    const { core } = admin()
    const other: V1Node = await createReadyFakeNode(core)
    try {
      const client = asToken(token)
      // Its own Node: readable. Another Node's status: RBAC allows the verb, the admission policy refuses it.
      await client.core.readNode({ name: REAL_NODE })
      const patch = await client.core
        .patchNodeStatus({
          name: other.metadata!.name!,
          body: [{ op: "add", path: "/metadata/labels/nodemend.io~1forged", value: "true" }]
        })
        .then(
          () => 200,
          (e) => errorCode(e)
        )
      expect(patch).toBe(403)
      const secrets = await client.core.listSecretForAllNamespaces().then(
        () => 200,
        (e) => errorCode(e)
      )
      expect(secrets).toBe(403)
    } finally {
      await deleteNode(core, other.metadata!.name!)
    }
  })
})
