// The agent's RBAC and admission policies as the chart renders them, applied for real (cluster-scoped names
// renamed to this run, the service accounts in this run's namespace), then exercised with REAL credentials:
// service-account tokens from the TokenRequest API, bound to Pods on two kwok Nodes (the node name reaches the
// API server as the user extra authentication.kubernetes.io/node-name, as the DaemonSet's projected token
// does), and one token bound to nothing. Every attack of issue #13 item 2 is a request here that RBAC alone
// lets through and the policies refuse; the agent's own writes (the agent binary itself, run with the bound token,
// and the request shapes packages/agent/src/k8s and src/diagnostics send) stay allowed.
import {
  ApiException,
  AuthenticationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod
} from "@kubernetes/client-node"
import {
  clients,
  createFakeNode,
  kubeconfigPath,
  createTestNamespace,
  deleteNamespace,
  deleteNode,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AWS_REQUIRED_VALUES,
  CHART_DIR,
  type KubeObject,
  makeApplyClient,
  parseObjects,
  render
} from "../../src/index.ts"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { Effect, Exit, Scope } from "effect"
import { NodeDiagnosticController } from "../../../agent/src/diagnostics/NodeDiagnosticController.ts"
import { makeKubeHttp } from "../../../agent/src/k8s/kube-http.ts"
import { startUploadServer } from "../../../agent/test/diagnostics/cluster/uploadServer.ts"
import { makeHostRoot } from "../../../agent/test/diagnostics/fixtures.ts"
import { makeFakeHost, startAgent } from "../../../agent/test/integration/agent-process.ts"
import { run as plugin } from "../../../kubectl-nodemend/src/cli.ts"

const { kc, core } = clients()
const api = makeApplyClient(kc)
const EVENTS = { group: "events.k8s.io", version: "v1", namespace: "default", plural: "events" }
const ND = { group: "nodemend.io", version: "v1alpha1", plural: "nodediagnostics" }
const SMP = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
const MERGE = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
const AGENT = "nodemend.io/agent"
const CONTROLLER = "nodemend.io/repair-controller"

let namespace = ""
let suffix = ""
const applied: KubeObject[] = []
const nodes: string[] = []
let nodeA = ""
let nodeB = ""

/** One identity: clients that authenticate with `token` only. */
interface Identity {
  readonly core: CoreV1Api
  readonly custom: CustomObjectsApi
  readonly authn: AuthenticationV1Api
}
let agentA: Identity
let agentAToken = ""
let agentUnbound: Identity
let impostor: Identity
let controller: Identity

const identity = (token: string): Identity => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error("no current cluster")
  const k = new KubeConfig()
  k.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "sa", token }],
    contexts: [{ name: "sa", cluster: cluster.name, user: "sa" }],
    currentContext: "sa"
  })
  return {
    core: k.makeApiClient(CoreV1Api),
    custom: k.makeApiClient(CustomObjectsApi),
    authn: k.makeApiClient(AuthenticationV1Api)
  }
}

/** A token of `serviceAccount` from the TokenRequest API, bound to `pod` (or to nothing). */
const tokenFor = async (serviceAccount: string, pod?: V1Pod): Promise<string> => {
  const r = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: {
      spec: {
        audiences: [],
        expirationSeconds: 3600,
        ...(pod === undefined
          ? {}
          : {
              boundObjectRef: {
                apiVersion: "v1",
                kind: "Pod",
                name: pod.metadata?.name,
                uid: pod.metadata?.uid
              }
            })
      }
    }
  })
  const token = r.status?.token
  if (!token) throw new Error(`no token for ${serviceAccount}`)
  return token
}

/** The chart's objects that grant and confine (RBAC, policies), renamed where they are cluster-wide or in `default`. */
const renamedForThisRun = (objects: ReadonlyArray<KubeObject>): KubeObject[] => {
  const kinds = [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding"
  ]
  return objects
    .filter((o) => kinds.includes(o.kind))
    .map((o) => {
      if (o.kind === "ServiceAccount" || o.metadata.namespace === namespace) return o
      const c = structuredClone(o) as unknown as {
        metadata: KubeObject["metadata"]
        roleRef?: { name: string }
        spec?: unknown
      }
      c.metadata = { ...c.metadata, name: `${o.metadata.name}-${suffix}` }
      if (c.roleRef) c.roleRef = { ...c.roleRef, name: `${c.roleRef.name}-${suffix}` }
      if (o.kind === "ValidatingAdmissionPolicyBinding") {
        const spec = c.spec as { policyName: string }
        c.spec = { ...spec, policyName: `${spec.policyName}-${suffix}` }
      }
      if (o.kind === "ValidatingAdmissionPolicy" && o.metadata.name === "nodemend-controller-events") {
        // As rendered it refuses controller-claiming Events from everyone but this run's controller: confined
        // here to this run's service accounts, so the controllers other suites run on this cluster keep writing.
        const spec = c.spec as { matchConditions: object[] }
        c.spec = {
          ...spec,
          matchConditions: [
            ...spec.matchConditions,
            {
              name: "this-test-run",
              expression: `request.userInfo.username.startsWith('system:serviceaccount:${namespace}:')`
            }
          ]
        }
      }
      return c as unknown as KubeObject
    })
}

/** Extra rights for the refusal tests: core/v1 Events for the agent, Events for an impostor account. */
const extraRbac = (): KubeObject[] => {
  const subjects = ["nodemend-agent", "impostor"].map((name) => ({ kind: "ServiceAccount", name, namespace }))
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "impostor", namespace } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: `events-${suffix}`, namespace: "default" },
      rules: [{ apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] }]
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `events-${suffix}`, namespace: "default" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `events-${suffix}` },
      subjects
    }
  ]
}

/** The CRD as the chart ships it, applied over any older copy another suite left (its status schema prunes). */
const ensureCrd = async () => {
  const [crd] = parseObjects(
    readFileSync(join(CHART_DIR, "crds", "nodediagnostics.nodemend.io.yaml"), "utf8")
  )
  if (crd === undefined) throw new Error("no CRD in the chart")
  const custom = kc.makeApiClient(CustomObjectsApi)
  const served = () =>
    custom.listClusterCustomObject(ND).then(
      () => true,
      () => false
    )
  await api.apply(crd)
  await waitFor("NodeDiagnostic served", served, { timeoutMs: 30_000 })
}

const podOn = async (node: string): Promise<V1Pod> =>
  core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: uniqueName("agent"), namespace },
      spec: {
        nodeName: node,
        serviceAccountName: "nodemend-agent",
        tolerations: [{ operator: "Exists" }],
        containers: [{ name: "agent", image: "registry.k8s.io/pause:3.10" }]
      }
    }
  })

type Outcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly code?: number; readonly message: string }

const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    () => ({ ok: true }) as const,
    (e: unknown) => {
      if (!(e instanceof ApiException)) throw e
      let message = String(e.body)
      try {
        message = (JSON.parse(String(e.body)) as { message?: string }).message ?? message
      } catch {}
      return { ok: false, code: e.code, message } as const
    }
  )

/** Refused by the admission policy `policy` (this run's copy), with a message containing `text`. */
const expectRefusedBy = (o: Outcome, policy: string, text: string) =>
  expectRefusedByOneOf(o, [[policy, text]])

/** For requests that more than one policy refuses: the API server reports one of them. */
const expectRefusedByOneOf = (o: Outcome, denials: ReadonlyArray<readonly [string, string]>) => {
  expect(o.ok, "the request was allowed").toBe(false)
  if (o.ok) return
  expect(o.code).toBe(403)
  const matching = denials.filter(
    ([policy, text]) =>
      o.message.includes(`ValidatingAdmissionPolicy '${policy}-${suffix}'`) && o.message.includes(text)
  )
  expect(matching, o.message).not.toHaveLength(0)
}
const CONTROLLER_CLAIM_REFUSED = [
  "nodemend-controller-events",
  "may not write Events as the nodemend repair controller"
] as const

const condition = (type: string, status: string, reason: string) => {
  const now = new Date().toISOString()
  return {
    type,
    status,
    reason,
    message: `${reason} (test)`,
    lastHeartbeatTime: now,
    lastTransitionTime: now
  }
}
const patchConditions = (who: Identity, node: string, conditions: object[]) =>
  who.core.patchNodeStatus({ name: node, body: { status: { conditions } } }, SMP)
const patchNodeStatus = (who: Identity, node: string, body: object) =>
  who.core.patchNodeStatus({ name: node, body }, SMP)

const microTime = () => new Date().toISOString().replace("Z", "000Z")
/** An events.k8s.io/v1 Event as the agent writes it (packages/agent/src/k8s/kube-api.ts createEvent). */
const agentEvent = (node: string, overrides: Record<string, unknown> = {}) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name: `${node}.${suffix}${Math.random().toString(16).slice(2, 10)}`, namespace: "default" },
  eventTime: microTime(),
  regarding: { apiVersion: "v1", kind: "Node", name: node },
  type: "Warning",
  reason: "SoftLockup",
  action: "Detected",
  note: "CPU stuck for 23s",
  reportingController: AGENT,
  reportingInstance: `nodemend-agent-${node}`,
  ...overrides
})
const createEvent = (who: Identity, body: object) =>
  who.custom.createNamespacedCustomObject({ ...EVENTS, body }) as Promise<{ metadata: { name: string } }>

beforeAll(async () => {
  namespace = await createTestNamespace(core, "vap")
  suffix = namespace
  const chart = render({ namespace, values: { ...AWS_REQUIRED_VALUES, agent: { namespace } } })
  const objects = [...renamedForThisRun(chart), ...extraRbac()]
  await ensureCrd()
  for (const o of objects) {
    await api.apply(o)
    applied.push(o)
  }
  nodeA = (await createFakeNode(core)).metadata?.name ?? ""
  nodes.push(nodeA)
  nodeB = (await createFakeNode(core)).metadata?.name ?? ""
  nodes.push(nodeB)
  agentAToken = await tokenFor("nodemend-agent", await podOn(nodeA))
  agentA = identity(agentAToken)
  agentUnbound = identity(await tokenFor("nodemend-agent"))
  impostor = identity(await tokenFor("impostor"))
  controller = identity(await tokenFor("nodemend-controller"))

  // RBAC and policies reach the authorizer and the admission plugin through informers: wait until each
  // policy refuses its probe (until then the probe may pass: it only touches this run's Node B and Events).
  const active = async (policy: string, probe: () => Promise<unknown>) =>
    waitFor(
      `policy ${policy} enforced`,
      async () => {
        const o = await outcome(probe())
        return !o.ok && o.message.includes(`ValidatingAdmissionPolicy '${policy}-${suffix}'`)
      },
      { timeoutMs: 60_000, intervalMs: 250 }
    )
  await active("nodemend-agent-nodes", () =>
    patchConditions(agentA, nodeB, [condition("KernelReady", "True", "KernelIsReady")])
  )
  await active("nodemend-agent-events", () => createEvent(agentA, agentEvent(nodeB)))
  await active("nodemend-controller-events", () =>
    createEvent(impostor, agentEvent(nodeB, { reportingController: CONTROLLER }))
  )
  const custom = kc.makeApiClient(CustomObjectsApi)
  for (const node of [nodeA, nodeB]) {
    await custom.createClusterCustomObject({
      ...ND,
      body: {
        apiVersion: "nodemend.io/v1alpha1",
        kind: "NodeDiagnostic",
        metadata: { name: node },
        spec: {
          logCapture: { destination: "https://bucket.s3.us-west-2.amazonaws.com/x?X-Amz-Signature=secret" }
        }
      }
    })
  }
  await active("nodemend-agent-nodediagnostics", () =>
    agentA.custom.patchClusterCustomObjectStatus({ ...ND, name: nodeB, body: runningStatus() }, MERGE)
  )
}, 180_000)

afterAll(async () => {
  const custom = kc.makeApiClient(CustomObjectsApi)
  for (const node of nodes) {
    await custom.deleteClusterCustomObject({ ...ND, name: node }).catch(() => undefined)
    await core
      .deleteCollectionNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${node}` })
      .catch(() => undefined)
    await deleteNode(core, node)
  }
  for (const o of applied.reverse()) await api.remove(o).catch(() => undefined)
  if (namespace) await deleteNamespace(core, namespace)
})

/** The status the agent's NodeDiagnosticController writes when it starts a capture (merge patch). */
const runningStatus = () => ({
  status: { captureStatuses: [{ type: "Log", state: { running: { startedAt: new Date().toISOString() } } }] }
})

describe("the agent's credentials", () => {
  it("a token bound to a Pod carries the Pod's Node; one bound to nothing carries none", async () => {
    const extra = async (who: Identity) =>
      (await who.authn.createSelfSubjectReview({ body: {} })).status?.userInfo?.extra ?? {}
    expect((await extra(agentA))["authentication.kubernetes.io/node-name"]).toEqual([nodeA])
    expect((await extra(agentUnbound))["authentication.kubernetes.io/node-name"]).toBeUndefined()
  })
})

describe("the agent binary with its Pod-bound token", () => {
  it("writes its conditions on its own Node and its Event about it, under the policies", async () => {
    // A kubeconfig as the DaemonSet's pod has it: the cluster, and the projected token bound to a Pod on Node A.
    const cluster = kc.getCurrentCluster()
    const dir = mkdtempSync(join(tmpdir(), "nodemend-vap-"))
    const host = makeFakeHost("6a1f0c2e-0000-4000-8000-00000000000a")
    const kubeconfig = join(dir, "kubeconfig")
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "c",
            cluster: { server: cluster?.server, "certificate-authority-data": cluster?.caData }
          }
        ],
        users: [{ name: "agent", user: { token: agentAToken } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "agent" } }],
        "current-context": "c"
      })
    )
    const agent = startAgent({ nodeName: nodeA, kubeconfig, hostRoot: host.root })
    try {
      await waitFor(
        "the agent's conditions on its Node",
        async () => {
          const n = await core.readNode({ name: nodeA })
          const c = n.status?.conditions?.find((x) => x.type === "ContainerRuntimeReady")
          return c?.status === "True"
        },
        { timeoutMs: 60_000 }
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nagent output:\n${agent.output().slice(-4000)}`)
      })
      host.appendKmsg("watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]")
      await waitFor(
        "the agent's SoftLockup Event",
        async () => {
          const list = await core.listNamespacedEvent({
            namespace: "default",
            fieldSelector: `involvedObject.name=${nodeA},reason=SoftLockup`
          })
          return list.items.some((e) => e.reportingComponent === AGENT)
        },
        { timeoutMs: 30_000 }
      )
      expect(agent.output()).not.toContain("ValidatingAdmissionPolicy")
    } finally {
      await agent.stop()
      host.cleanup()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("Node status: own Node, own five conditions only", () => {
  it("allows the agent's strategic-merge patch of its conditions on its own Node (kubelet's kept)", async () => {
    const before = await core.readNode({ name: nodeA })
    await patchConditions(agentA, nodeA, [
      condition("KernelReady", "False", "SoftLockup"),
      condition("AcceleratedHardwareReady", "True", "AcceleratedHardwareIsReady")
    ])
    const after = await core.readNode({ name: nodeA })
    const types = (after.status?.conditions ?? []).map((c) => c.type)
    expect(types).toEqual(expect.arrayContaining(["KernelReady", "AcceleratedHardwareReady"]))
    expect(after.metadata?.labels).toEqual(before.metadata?.labels)
  })

  it("refuses another Node's status (the forged KernelReady=False that got a healthy node replaced)", async () => {
    const old = "2020-01-01T00:00:00Z"
    const forged = { ...condition("KernelReady", "False", "SoftLockup"), lastTransitionTime: old }
    expectRefusedBy(
      await outcome(patchConditions(agentA, nodeB, [forged])),
      "nodemend-agent-nodes",
      `may not write Node ${nodeB}`
    )
    const b = await core.readNode({ name: nodeB })
    expect(b.status?.conditions?.find((c) => c.type === "KernelReady")?.status).not.toBe("False")
  })

  it.each([
    ["a pool label", { metadata: { labels: { "karpenter.sh/nodepool": "other" } } }],
    [
      "an instance-type label",
      { metadata: { labels: { "node.kubernetes.io/instance-type": "p5.48xlarge" } } }
    ],
    ["the do-not-repair annotation", { metadata: { annotations: { "nodemend.io/do-not-repair": "true" } } }]
  ])("refuses %s through its own Node's status", async (_, body) => {
    expectRefusedBy(
      await outcome(patchNodeStatus(agentA, nodeA, body)),
      "nodemend-agent-nodes",
      "may not change a Node's labels, annotations"
    )
  })

  it("refuses forged addresses and capacity", async () => {
    for (const status of [
      { addresses: [{ type: "InternalIP", address: "10.9.9.9" }] },
      { capacity: { "nvidia.com/gpu": "8" } }
    ]) {
      expectRefusedBy(
        await outcome(patchNodeStatus(agentA, nodeA, { status })),
        "nodemend-agent-nodes",
        "may change only status.conditions"
      )
    }
  })

  it.each(["Ready", "DiskPressure", "NetworkUnavailable"])("refuses kubelet's %s condition", async (type) => {
    expectRefusedBy(
      await outcome(patchConditions(agentA, nodeA, [condition(type, "False", "Forged")])),
      "nodemend-agent-nodes",
      "may write only its own condition types"
    )
  })

  it("refuses a token that names no Node, even for its own condition types", async () => {
    expectRefusedBy(
      await outcome(
        patchConditions(agentUnbound, nodeA, [condition("KernelReady", "True", "KernelIsReady")])
      ),
      "nodemend-agent-nodes",
      "has no authentication.kubernetes.io/node-name"
    )
  })

  it("RBAC still refuses the Node object itself", async () => {
    const o = await outcome(
      agentA.core.patchNode({ name: nodeA, body: { metadata: { labels: { x: "y" } } } }, SMP)
    )
    expect(o).toMatchObject({ ok: false, code: 403 })
  })
})

describe("NodeDiagnostic status: own Node's only", () => {
  it("allows the agent's merge patch of its own NodeDiagnostic's status", async () => {
    const body = runningStatus()
    await agentA.custom.patchClusterCustomObjectStatus({ ...ND, name: nodeA, body }, MERGE)
    // Stored, as read back by the admin: the policy let it through rather than the call being a no-op.
    const stored = (await kc
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...ND, name: nodeA })) as {
      status?: { captureStatuses?: unknown[] }
    }
    expect(stored.status?.captureStatuses).toEqual(body.status.captureStatuses)
  })

  it("refuses another Node's NodeDiagnostic status (a forged result) and any create or delete", async () => {
    const completed = {
      status: {
        captureStatuses: [
          {
            type: "Log",
            state: {
              completed: {
                reason: "Success",
                message: "forged",
                startedAt: new Date().toISOString(),
                finishedAt: new Date().toISOString()
              }
            }
          }
        ]
      }
    }
    expectRefusedBy(
      await outcome(
        agentA.custom.patchClusterCustomObjectStatus({ ...ND, name: nodeB, body: completed }, MERGE)
      ),
      "nodemend-agent-nodediagnostics",
      `may not write NodeDiagnostic ${nodeB}`
    )
    expectRefusedBy(
      await outcome(
        agentUnbound.custom.patchClusterCustomObjectStatus(
          { ...ND, name: nodeA, body: runningStatus() },
          MERGE
        )
      ),
      "nodemend-agent-nodediagnostics",
      "has no authentication.kubernetes.io/node-name"
    )
  })

  it("known limit (docs/install.md): RBAC cannot scope reads to one name per Node, so another Node's spec stays readable", async () => {
    // Admission sees no reads and RBAC has no per-node names for one shared service account. When this
    // fails, reads became confined: update docs/install.md ("What the agent can still do").
    const other = (await agentA.custom.getClusterCustomObject({ ...ND, name: nodeB })) as {
      spec: { logCapture: { destination: string } }
    }
    expect(other.spec.logCapture.destination).toContain("X-Amz-Signature")
  })
})

describe("Events: about its own Node, as the agent", () => {
  it("allows the agent's Event about its Node and the merge patch that raises its series", async () => {
    const ev = await createEvent(agentA, agentEvent(nodeA))
    await agentA.custom.patchNamespacedCustomObject(
      { ...EVENTS, name: ev.metadata.name, body: { series: { count: 2, lastObservedTime: microTime() } } },
      MERGE
    )
    const stored = (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...EVENTS, name: ev.metadata.name })) as {
      regarding?: { name?: string }
      reportingController?: string
      series?: { count?: number }
    }
    expect(stored.regarding?.name).toBe(nodeA)
    expect(stored.reportingController).toBe(AGENT)
    expect(stored.series?.count).toBe(2)
  })

  it("refuses an Event regarding another Node", async () => {
    expectRefusedBy(
      await outcome(createEvent(agentA, agentEvent(nodeB, { reportingInstance: `nodemend-agent-${nodeA}` }))),
      "nodemend-agent-events",
      "may write only Events regarding its own Node"
    )
  })

  it("refuses an Event that claims the repair controller (e.g. a forged RepairBlocked)", async () => {
    const forged = agentEvent(nodeA, {
      reason: "RepairBlocked",
      action: "Decide",
      reportingController: CONTROLLER,
      reportingInstance: "nodemend-controller-0"
    })
    expectRefusedByOneOf(await outcome(createEvent(agentA, forged)), [
      ["nodemend-agent-events", `not ${CONTROLLER}`],
      CONTROLLER_CLAIM_REFUSED
    ])
    // the same through core/v1 (matchPolicy Equivalent): reportingComponent is reportingController there
    const core1 = await outcome(
      agentA.core.createNamespacedEvent({
        namespace: "default",
        body: {
          metadata: { name: `${nodeA}.${suffix}core`, namespace: "default" },
          involvedObject: { apiVersion: "v1", kind: "Node", name: nodeA },
          reason: "RepairBlocked",
          message: "breaker open",
          type: "Warning",
          reportingComponent: CONTROLLER,
          reportingInstance: "nodemend-controller-0",
          source: { component: CONTROLLER }
        }
      })
    )
    expectRefusedByOneOf(core1, [
      ["nodemend-agent-events", "reportingController nodemend.io/agent"],
      CONTROLLER_CLAIM_REFUSED
    ])
  })

  it("refuses a token that names no Node", async () => {
    expectRefusedBy(
      await outcome(createEvent(agentUnbound, agentEvent(nodeA))),
      "nodemend-agent-events",
      "has no authentication.kubernetes.io/node-name"
    )
  })

  it("refuses patching an Event of the controller's", async () => {
    const ev = await createEvent(
      controller,
      agentEvent(nodeA, {
        reason: "RepairBlocked",
        reportingController: CONTROLLER,
        reportingInstance: "c-0"
      })
    )
    expectRefusedByOneOf(
      await outcome(
        agentA.custom.patchNamespacedCustomObject(
          // the one change an Event takes (series); note, reason and the rest are immutable after create
          {
            ...EVENTS,
            name: ev.metadata.name,
            body: { series: { count: 99, lastObservedTime: microTime() } }
          },
          MERGE
        )
      ),
      [["nodemend-agent-events", "reportingController nodemend.io/agent"], CONTROLLER_CLAIM_REFUSED]
    )
  })
})

describe("Events as the repair controller: its service account only", () => {
  it("the controller's account writes them; any other account is refused, core/v1 included", async () => {
    const claim = {
      reason: "RepairBlocked",
      action: "Decide",
      reportingController: CONTROLLER,
      reportingInstance: "c-0"
    }
    await createEvent(controller, agentEvent(nodeA, claim))
    expectRefusedBy(
      await outcome(createEvent(impostor, agentEvent(nodeA, claim))),
      "nodemend-controller-events",
      "may not write Events as the nodemend repair controller"
    )
    const core1 = await outcome(
      impostor.core.createNamespacedEvent({
        namespace: "default",
        body: {
          metadata: { name: `${nodeA}.${suffix}impostor`, namespace: "default" },
          involvedObject: { apiVersion: "v1", kind: "Node", name: nodeA },
          reason: "RepairBlocked",
          message: "breaker open",
          type: "Warning",
          reportingComponent: CONTROLLER,
          reportingInstance: "c-0"
        }
      })
    )
    expectRefusedBy(
      core1,
      "nodemend-controller-events",
      "may not write Events as the nodemend repair controller"
    )
    // Events that do not claim the controller are not this policy's business.
    await createEvent(
      impostor,
      agentEvent(nodeA, { reportingController: "example.com/other", reportingInstance: "x" })
    )
  })
})

/** A kubeconfig as the DaemonSet's pod has it: the cluster, and `token`. */
const tokenKubeconfig = (dir: string, token: string): string => {
  const cluster = kc.getCurrentCluster()
  const path = join(dir, `kubeconfig-${randomBytes(4).toString("hex")}`)
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "c", cluster: { server: cluster?.server, "certificate-authority-data": cluster?.caData } }
      ],
      users: [{ name: "agent", user: { token } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "agent" } }],
      "current-context": "c"
    })
  )
  return path
}

interface ReportedCapture {
  spec: { logCapture: { destination: string } }
  status?: {
    captureStatuses?: Array<{
      type: string
      state: { completed?: { bundle?: { sha256: string; size: number } } }
    }>
  }
}

describe("a bundle forged under another Node's key (issue #13 item 2: readable upload URLs)", () => {
  it("node B's agent reads A's URL and uploads after A's agent finished; kubectl nodemend logs refuses it", async () => {
    // Victim: a Node with its agent's collector running in-process on a token bound to a Pod there. Attacker:
    // the agent identity of Node B (a token bound to a Pod on B), which RBAC lets read every NodeDiagnostic.
    const victim = (await createFakeNode(core)).metadata?.name ?? ""
    nodes.push(victim)
    const victimToken = await tokenFor("nodemend-agent", await podOn(victim))
    const agentB = identity(await tokenFor("nodemend-agent", await podOn(nodeB)))
    const dir = mkdtempSync(join(tmpdir(), "nodemend-forged-"))
    const server = await startUploadServer()
    const hostRoot = await makeHostRoot()
    const scope = await Effect.runPromise(Scope.make())
    const key = `/bucket/${victim}-logs.tar.gz`
    let releaseDownload = () => {}
    server.holdGets.set(key, new Promise<void>((r) => (releaseDownload = r)))
    try {
      await Effect.runPromise(
        NodeDiagnosticController({
          http: makeKubeHttp(kubeAccessFromKubeconfig(tokenKubeconfig(dir, victimToken))),
          nodeName: victim,
          hostRoot,
          workDir: dir,
          destinationAllowlist: [`${server.base}/bucket/`]
        }).pipe(Scope.provide(scope))
      )
      const url = `${server.base}/bucket/{node}-logs.tar.gz?X-Amz-Signature=s3cr3t`
      const pluginRun = (async () => {
        const out: string[] = []
        const code = await plugin(
          [
            "logs",
            victim,
            "-o",
            join(dir, "out"),
            "--timeout",
            "60s",
            "--categories",
            "Base",
            "--destination-url",
            url,
            "--download-url",
            url,
            "--kubeconfig",
            kubeconfigPath()
          ],
          { out: (t) => out.push(t), err: (t) => out.push(t) }
        )
        return { code, output: out.join("\n") }
      })()

      // The attacker watches A's NodeDiagnostic with B's token until A's agent reports its bundle.
      const reported = await waitFor(
        "the victim's agent to report its bundle",
        async () => {
          const nd = (await agentB.custom.getClusterCustomObject({ ...ND, name: victim })) as ReportedCapture
          const bundle = nd.status?.captureStatuses?.find((c) => c.type === "Log")?.state.completed?.bundle
          return bundle ? { destination: nd.spec.logCapture.destination, bundle } : undefined
        },
        { timeoutMs: 60_000, intervalMs: 100 }
      )
      const genuine = server.objects.get(key)
      expect(genuine, "the victim's agent uploaded its bundle").toBeDefined()
      expect(reported.bundle).toEqual({
        sha256: createHash("sha256").update(genuine!).digest("hex"),
        size: genuine!.length
      })

      // B cannot put its digest into A's status (admission)...
      const forged = randomBytes(4096)
      const forgedDigest = { sha256: createHash("sha256").update(forged).digest("hex"), size: forged.length }
      const now = new Date().toISOString()
      expectRefusedBy(
        await outcome(
          agentB.custom.patchClusterCustomObjectStatus(
            {
              ...ND,
              name: victim,
              body: {
                status: {
                  captureStatuses: [
                    {
                      type: "Log",
                      state: {
                        completed: {
                          reason: "Success",
                          message: "uploaded",
                          startedAt: now,
                          finishedAt: now,
                          observedGeneration: 1,
                          bundle: forgedDigest
                        }
                      }
                    }
                  ]
                }
              }
            },
            MERGE
          )
        ),
        "nodemend-agent-nodediagnostics",
        `may not write NodeDiagnostic ${victim}`
      )
      // ...but the URL it read still takes its upload under A's key (a PUT URL is valid until it expires).
      const put = await fetch(reported.destination, { method: "PUT", body: forged })
      expect(put.status).toBe(200)
      expect(server.objects.get(key)?.equals(forged)).toBe(true)
      releaseDownload()

      const { code, output } = await pluginRun
      expect(code, output).toBe(1)
      expect(output).toContain(`${victim}: the downloaded bundle is not the one the node's agent reported`)
      expect(output).toContain(`expected sha256 ${reported.bundle.sha256}`)
      expect(output).toContain(`got sha256 ${forgedDigest.sha256}`)
      expect(existsSync(join(dir, "out", `${victim}-logs.tar.gz`))).toBe(false)
      expect(readFileSync(join(dir, "out", `${victim}-logs.tar.gz.untrusted`)).equals(forged)).toBe(true)
    } finally {
      releaseDownload()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await server.close()
      rmSync(hostRoot, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
