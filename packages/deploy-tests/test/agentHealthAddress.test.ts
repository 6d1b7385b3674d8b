// The agent runs with hostNetwork, so its health server's listen address is an address of the node. The
// DaemonSet (plain and the chart's default) binds the pod IP from the downward API, which is what the kubelet
// probes and the PodMonitor scrapes, and nothing else; the chart's agent.healthHost can widen it on purpose.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseAddress } from "../../agent/src/health/health-server.ts"
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

interface Container {
  args: string[]
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]
  ports: { name: string; containerPort: number }[]
  livenessProbe: { httpGet: { port: number } }
  readinessProbe: { httpGet: { port: number } }
}

const agent = (objects: ReadonlyArray<KubeObject>): Container =>
  (
    find(objects, "DaemonSet", "nodemend-agent") as unknown as {
      spec: { template: { spec: { containers: Container[] } } }
    }
  ).spec.template.spec.containers[0]!

const healthAddress = (c: Container) =>
  c.args.find((a) => a.startsWith("--health-address="))?.slice("--health-address=".length)

/** `$(VAR)` as the kubelet expands it, from the container's downward API env. */
const expand = (c: Container, text: string, status: Record<string, string>) =>
  text.replace(/\$\((\w+)\)/gu, (whole, name: string) => {
    const path = c.env.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath
    return path === undefined ? whole : (status[path] ?? whole)
  })

describe.each([
  ["deploy/agent/daemonset.yaml", () => loadManifests("agent")],
  ["the chart's default render", () => render({ values: AWS_REQUIRED_VALUES })]
])("%s: the agent's health server listens on the pod IP only", (_what, objects) => {
  const c = agent(objects())

  it("binds $(POD_IP), the downward API's status.podIP, on the health port", () => {
    const health = c.ports.find((p) => p.name === "health")?.containerPort
    expect(healthAddress(c)).toBe(`$(POD_IP):${health}`)
    expect(c.env.find((e) => e.name === "POD_IP")?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP")
  })

  it("is where the kubelet probes and the PodMonitor scrapes: the pod IP and the health port", () => {
    const health = c.ports.find((p) => p.name === "health")?.containerPort
    expect([c.livenessProbe.httpGet.port, c.readinessProbe.httpGet.port]).toEqual([health, health])
    const monitors = parseObjects(readFileSync(join(DEPLOY_DIR, "monitoring", "podmonitors.yaml"), "utf8"))
    const endpoints = (
      find(monitors, "PodMonitor", "nodemend-agent").spec as { podMetricsEndpoints: { port: string }[] }
    ).podMetricsEndpoints
    expect(endpoints.map((e) => e.port)).toEqual(["health"])
  })

  it("expands to one address the agent binds, IPv4 or IPv6", () => {
    for (const ip of ["10.0.3.7", "fd00:10::7"]) {
      const address = expand(c, healthAddress(c) ?? "", { "status.podIP": ip })
      expect(Result.getOrThrow(parseAddress(address))).toEqual({ host: ip, port: 8002 })
    }
  })
})

describe("chart: agent.healthHost", () => {
  it('"" listens on every interface, on purpose', () => {
    const c = agent(render({ values: { ...AWS_REQUIRED_VALUES, agent: { enabled: true, healthHost: "" } } }))
    expect(healthAddress(c)).toBe(":8002")
    expect(Result.getOrThrow(parseAddress(":8002")).host).toBeUndefined()
  })

  it("refuses a host name", () => {
    const r = template({
      values: { ...AWS_REQUIRED_VALUES, agent: { enabled: true, healthHost: "localhost" } }
    })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/\/agent\/healthHost'/u)
  })
})
