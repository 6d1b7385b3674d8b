// The NetworkPolicies of the controller's and the agents' metrics and health port (deploy/*/networkpolicy.yaml and
// the chart's networkPolicy values): they select the workload's pods, open only the port its probes and its
// PodMonitor use, only to the allowed peers, and leave egress alone. The API server's own validation of them is
// test/cluster/dryRun.test.ts.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  AWS_REQUIRED_VALUES,
  DEPLOY_DIR,
  find,
  type KubeObject,
  loadManifests,
  parseObjects,
  render,
  template
} from "../src/index.ts"

interface Peer {
  readonly [k: string]: unknown
}
interface Policy {
  metadata: { namespace?: string }
  spec: {
    podSelector: { matchLabels: Record<string, string> }
    policyTypes: string[]
    ingress: { from?: Peer[]; ports?: { port: string | number; protocol: string }[] }[]
    egress?: unknown
  }
}
interface Workload {
  metadata: { namespace?: string }
  spec: {
    template: {
      metadata: { labels: Record<string, string> }
      spec: {
        hostNetwork?: boolean
        containers: {
          ports: { name: string; containerPort: number }[]
          livenessProbe: { httpGet: { port: string | number } }
          readinessProbe: { httpGet: { port: string | number } }
        }[]
      }
    }
  }
}

const policy = (objects: ReadonlyArray<KubeObject>, name: string) =>
  find(objects, "NetworkPolicy", name) as unknown as Policy
const MONITORING = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]
const podMonitors = parseObjects(readFileSync(join(DEPLOY_DIR, "monitoring", "podmonitors.yaml"), "utf8"))

const workloads = [
  ["nodemend-controller", "Deployment"],
  ["nodemend-agent", "DaemonSet"]
] as const

describe.each([
  ["deploy/", () => [...loadManifests("agent"), ...loadManifests("controller")]],
  ["the chart's default render", () => render({ values: AWS_REQUIRED_VALUES })]
])("%s: a NetworkPolicy per workload", (_what, objects) => {
  const all = objects()

  it.each(workloads)("%s: selects the %s's pods, in its namespace", (name, kind) => {
    const w = find(all, kind, name) as unknown as Workload
    const p = policy(all, name)
    expect(p.metadata.namespace).toBe(w.metadata.namespace)
    expect(w.spec.template.metadata.labels).toMatchObject(p.spec.podSelector.matchLabels)
    expect(Object.keys(p.spec.podSelector.matchLabels)).not.toHaveLength(0)
  })

  it.each(workloads)(
    "%s: ingress only to the port its probes and PodMonitor use, only from the monitoring namespace; egress open",
    (name, kind) => {
      const w = find(all, kind, name) as unknown as Workload
      const p = policy(all, name)
      expect(p.spec.policyTypes).toEqual(["Ingress"])
      expect(p.spec.egress).toBeUndefined()
      expect(p.spec.ingress).toHaveLength(1)
      const [rule] = p.spec.ingress
      expect(rule?.from).toEqual(MONITORING)
      expect(rule?.ports).toHaveLength(1)
      const portName = rule?.ports?.[0]?.port
      expect(rule?.ports?.[0]?.protocol).toBe("TCP")
      const container = w.spec.template.spec.containers[0]!
      const port = container.ports.find((x) => x.name === portName)
      expect(port).toBeDefined()
      for (const probe of [container.livenessProbe, container.readinessProbe])
        expect([portName, port?.containerPort]).toContain(probe.httpGet.port)
      const monitor = find(podMonitors, "PodMonitor", name).spec as {
        podMetricsEndpoints: { port: string }[]
      }
      expect(monitor.podMetricsEndpoints.map((e) => e.port)).toEqual([portName])
    }
  )

  it("the agent runs with hostNetwork (why docs/security.md says its policy seldom applies)", () => {
    const ds = find(all, "DaemonSet", "nodemend-agent") as unknown as Workload
    expect(ds.spec.template.spec.hostNetwork).toBe(true)
  })
})

describe("chart: networkPolicy values", () => {
  it("metricsFrom reaches both policies as given; each lives with its workload", () => {
    const metricsFrom = [
      {
        namespaceSelector: { matchLabels: { team: "observability" } },
        podSelector: { matchLabels: { app: "prom" } }
      },
      { ipBlock: { cidr: "10.20.0.0/16", except: ["10.20.9.0/24"] } }
    ]
    const objects = render({
      namespace: "nm-ops",
      values: {
        ...AWS_REQUIRED_VALUES,
        agent: { enabled: true, namespace: "nm-agents" },
        networkPolicy: { enabled: true, metricsFrom }
      }
    })
    expect(policy(objects, "nodemend-controller").metadata.namespace).toBe("nm-ops")
    expect(policy(objects, "nodemend-agent").metadata.namespace).toBe("nm-agents")
    for (const [name, port] of [
      ["nodemend-controller", "http"],
      ["nodemend-agent", "health"]
    ] as const)
      expect(policy(objects, name).spec.ingress).toEqual([
        { from: metricsFrom, ports: [{ port, protocol: "TCP" }] }
      ])
  })

  it("metricsFrom [] lets no pod in: no ingress rule at all, never a rule with an empty from (which admits all)", () => {
    const objects = render({
      values: { ...AWS_REQUIRED_VALUES, networkPolicy: { enabled: true, metricsFrom: [] } }
    })
    for (const name of ["nodemend-controller", "nodemend-agent"]) {
      const p = policy(objects, name)
      expect(p.spec.policyTypes).toEqual(["Ingress"])
      expect(p.spec.ingress).toEqual([])
    }
  })

  it("enabled: false renders none; a half left out renders only the other's", () => {
    const kinds = (values: Record<string, unknown>) =>
      render({ values: { ...AWS_REQUIRED_VALUES, ...values } })
        .filter((o) => o.kind === "NetworkPolicy")
        .map((o) => o.metadata.name)
    expect(kinds({ networkPolicy: { enabled: false } })).toEqual([])
    expect(kinds({ agent: { enabled: false } })).toEqual(["nodemend-controller"])
    expect(kinds({ controller: { enabled: false } })).toEqual(["nodemend-agent"])
  })

  it.each([
    [
      "an empty peer",
      { enabled: true, metricsFrom: [{}] },
      /\/networkPolicy\/metricsFrom\/0': minProperties/u
    ],
    [
      "a peer field that does not exist",
      { enabled: true, metricsFrom: [{ namespace: "monitoring" }] },
      /\/networkPolicy\/metricsFrom\/0': additional properties 'namespace' not allowed/u
    ],
    [
      "an ipBlock without cidr",
      { enabled: true, metricsFrom: [{ ipBlock: { except: ["10.0.0.0/8"] } }] },
      /\/networkPolicy\/metricsFrom\/0\/ipBlock': missing property 'cidr'/u
    ],
    [
      "a selector operator that does not exist",
      { enabled: true, metricsFrom: [{ podSelector: { matchExpressions: [{ key: "a", operator: "Is" }] } }] },
      /\/networkPolicy\/metricsFrom\/0\/podSelector\/matchExpressions\/0\/operator'/u
    ],
    [
      "a misspelt key",
      { enabled: true, metricsFrom: [], allowFrom: [] },
      /additional properties 'allowFrom' not allowed/u
    ]
  ])("refused: %s", (_what, networkPolicy, message) => {
    const r = template({ values: { ...AWS_REQUIRED_VALUES, networkPolicy } })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("values don't meet the specifications of the schema")
    expect(r.stderr).toMatch(message)
  })
})
