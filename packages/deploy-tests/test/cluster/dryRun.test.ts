// Every object the chart renders, applied to the real API server with dryRun=All and fieldValidation=Strict:
// schema validation, defaulting, admission and CEL rules run; nothing is stored. Objects go to a namespace of
// this run (the agent's too), so nothing an engineer or another test has installed is touched.
import { clients, createTestNamespace, deleteNamespace } from "@nodemend/cluster-harness"
import { VersionApi } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  ApiError,
  AWS_REQUIRED_VALUES,
  type DryRunClient,
  find,
  type KubeObject,
  makeDryRunClient,
  render
} from "../../src/index.ts"

const { kc, core } = clients()
let namespace = ""
let kubeVersion = ""
let api: DryRunClient

beforeAll(async () => {
  namespace = await createTestNamespace(core, "helm")
  kubeVersion = (await kc.makeApiClient(VersionApi).getCode()).gitVersion
  api = makeDryRunClient(kc)
})
afterAll(async () => {
  if (namespace) await deleteNamespace(core, namespace)
})

/** CRDs first, as helm installs them. */
const applyAll = async (objects: ReadonlyArray<KubeObject>): Promise<KubeObject[]> => {
  const ordered = [...objects].sort(
    (a, b) => Number(b.kind === "CustomResourceDefinition") - Number(a.kind === "CustomResourceDefinition")
  )
  const out: KubeObject[] = []
  for (const o of ordered) {
    try {
      out.push(await api.apply(o))
    } catch (e) {
      throw new Error(`${o.kind}/${o.metadata.name}: ${(e as Error).message}`)
    }
  }
  return out
}

/** Every kind of NetworkPolicyPeer the values schema lets through. */
const METRICS_FROM = [
  {
    namespaceSelector: { matchExpressions: [{ key: "team", operator: "In", values: ["observability"] }] },
    podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } }
  },
  { ipBlock: { cidr: "10.20.0.0/16", except: ["10.20.9.0/24"] } }
]

const renderHere = (values: Record<string, unknown>) =>
  render({
    namespace,
    kubeVersion,
    includeCrds: true,
    values: { ...values, agent: { ...(values.agent as object), namespace } }
  })

describe("server-side dry run of the rendered chart", () => {
  it("default values (aws): the API server accepts every object", async () => {
    const objects = renderHere(AWS_REQUIRED_VALUES)
    expect(objects.map((o) => o.kind)).toContain("CustomResourceDefinition")
    const stored = await applyAll(objects)
    expect(stored).toHaveLength(objects.length)
    // What the server would store still carries what the chart says (nothing was pruned as unknown).
    const ds = find(stored, "DaemonSet", "nodemend-agent") as unknown as {
      spec: { template: { spec: { containers: { command: string[] }[] } } }
    }
    expect(ds.spec.template.spec.containers[0]?.command).toContain("--max-semi-space-size=1")
    const crd = JSON.stringify(find(stored, "CustomResourceDefinition", "nodediagnostics.nodemend.io"))
    expect(crd).toContain("x-kubernetes-validations")
    // The NetworkPolicies as the chart wrote them: ingress from the monitoring namespace to the one port.
    for (const [name, port] of [
      ["nodemend-controller", "http"],
      ["nodemend-agent", "health"]
    ] as const)
      expect(find(stored, "NetworkPolicy", name).spec).toEqual({
        podSelector: { matchLabels: { "app.kubernetes.io/name": name } },
        policyTypes: ["Ingress"],
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
            ports: [{ port, protocol: "TCP" }]
          }
        ]
      })
  })

  it("kwok, dry-run controller, IRSA annotation: accepted", async () => {
    const objects = renderHere({
      controller: {
        cloudProvider: "kwok",
        dryRun: true,
        replicas: 1,
        leaderElection: { enabled: false },
        serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/nm" } }
      },
      networkPolicy: { enabled: true, metricsFrom: METRICS_FROM }
    })
    const stored = await applyAll(objects)
    // Every object accepted, as the chart set it: the IRSA annotation and the kwok, dry-run config kept.
    expect(stored).toHaveLength(objects.length)
    expect(find(stored, "ServiceAccount", "nodemend-controller").metadata.annotations).toMatchObject({
      "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/nm"
    })
    const config = (
      find(stored, "ConfigMap", "nodemend-controller") as unknown as { data: Record<string, string> }
    ).data["controller.yaml"]
    expect(config).toMatch(/^cloudProvider: kwok$/m)
    expect(config).toMatch(/^dryRun: true$/m)
    const deployment = find(stored, "Deployment", "nodemend-controller") as unknown as {
      spec: { replicas: number }
    }
    expect(deployment.spec.replicas).toBe(1)
    expect(find(stored, "NetworkPolicy", "nodemend-controller").spec).toMatchObject({
      ingress: [{ from: METRICS_FROM }]
    })
    // No peer allowed: a policy with no ingress rule (the API server may leave the empty list out).
    const closed = renderHere({
      controller: { cloudProvider: "kwok" },
      networkPolicy: { enabled: true, metricsFrom: [] }
    }).filter((o) => o.kind === "NetworkPolicy")
    expect(closed).toHaveLength(2)
    for (const o of await applyAll(closed))
      expect((o.spec as { ingress?: unknown[] }).ingress ?? []).toEqual([])
  })

  it("agent only and controller only: accepted", async () => {
    const kinds = (objects: ReadonlyArray<KubeObject>) => objects.map((o) => o.kind)
    const agentOnly = renderHere({ controller: { enabled: false } })
    const agentStored = await applyAll(agentOnly)
    expect(agentStored).toHaveLength(agentOnly.length)
    expect(kinds(agentStored)).toContain("DaemonSet")
    expect(kinds(agentStored)).not.toContain("Deployment")
    const controllerOnly = renderHere({ ...AWS_REQUIRED_VALUES, agent: { enabled: false } })
    const controllerStored = await applyAll(controllerOnly)
    expect(controllerStored).toHaveLength(controllerOnly.length)
    expect(kinds(controllerStored)).toContain("Deployment")
    expect(kinds(controllerStored)).not.toContain("DaemonSet")
  })

  it("fails on an object the API server would refuse (the check can fail)", async () => {
    const ds = find(renderHere({ controller: { enabled: false } }), "DaemonSet", "nodemend-agent")
    const broken = structuredClone(ds) as unknown as {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } }
    }
    const container = broken.spec.template.spec.containers[0]
    if (container === undefined) throw new Error("no container")
    container.imagePullPolicy = "Sometimes"
    const error = await api.apply(broken as unknown as KubeObject).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(422)
    expect((error as ApiError).message).toContain("imagePullPolicy")
  })
})
