// The chart's default render against the plain manifests in deploy/: the same objects, the same RBAC rules
// (least privilege exactly as reviewed there), the same admission policies, the same pod specs (images, commands, args, NODE_OPTIONS V8
// flags, probes, resources, security contexts) and config files that decode to the same configuration.
// The chart adds labels, a config checksum annotation and imagePullPolicy; the manifests' Namespace object
// is `helm install --create-namespace`'s job. Everything else must match.
import { parseConfigText } from "@nodemend/agent"
import { decodeConfig } from "@nodemend/repair-controller"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { AWS_REQUIRED_VALUES, find, type KubeObject, loadManifests, render } from "../src/index.ts"

const manifests = [...loadManifests("agent"), ...loadManifests("controller")]
const chart = render({ values: AWS_REQUIRED_VALUES, namespace: "nodemend-system" })

const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`

type PodTemplateOwner = {
  spec: { template: { metadata?: unknown; spec: { containers: Record<string, unknown>[] } } }
}

/** A workload's spec without what the chart adds on purpose (pod labels/annotations, imagePullPolicy). */
const workloadSpec = (o: KubeObject): unknown => {
  const spec = structuredClone((o as unknown as PodTemplateOwner).spec)
  delete spec.template.metadata
  for (const c of spec.template.spec.containers) delete c.imagePullPolicy
  return spec
}

const configText = (objects: ReadonlyArray<KubeObject>, name: string, file: string): string =>
  (find(objects, "ConfigMap", name).data as Record<string, string>)[file] ?? ""

describe("default render = deploy/agent + deploy/controller", () => {
  it("renders the same objects (less the Namespace, which helm creates)", () => {
    const expected = manifests
      .filter((o) => o.kind !== "Namespace")
      .map(key)
      .sort()
    expect(chart.map(key).sort()).toEqual(expected)
  })

  it.each([
    "ClusterRole/nodemend-agent",
    "Role/nodemend-agent-events",
    "ClusterRole/nodemend-controller",
    "Role/nodemend-controller",
    "ClusterRole/nodemend-repair-requester"
  ])("%s has exactly the manifest's rules", (ref) => {
    const [kind = "", name = ""] = ref.split("/")
    expect(find(chart, kind, name).rules).toEqual(find(manifests, kind, name).rules)
  })

  it.each([
    "ClusterRoleBinding/nodemend-agent",
    "RoleBinding/nodemend-agent-events",
    "ClusterRoleBinding/nodemend-controller",
    "RoleBinding/nodemend-controller"
  ])("%s binds the same role to the same subjects", (ref) => {
    const [kind = "", name = ""] = ref.split("/")
    const { roleRef, subjects } = find(manifests, kind, name)
    expect(find(chart, kind, name)).toMatchObject({ roleRef, subjects })
  })

  it.each([
    "ValidatingAdmissionPolicy/nodemend-agent-nodes",
    "ValidatingAdmissionPolicy/nodemend-agent-nodediagnostics",
    "ValidatingAdmissionPolicy/nodemend-agent-events",
    "ValidatingAdmissionPolicy/nodemend-controller-events",
    "ValidatingAdmissionPolicy/nodemend-repair-requests",
    "ValidatingAdmissionPolicyBinding/nodemend-agent-nodes",
    "ValidatingAdmissionPolicyBinding/nodemend-agent-nodediagnostics",
    "ValidatingAdmissionPolicyBinding/nodemend-agent-events",
    "ValidatingAdmissionPolicyBinding/nodemend-controller-events",
    "ValidatingAdmissionPolicyBinding/nodemend-repair-requests"
  ])("%s has the manifest's spec (match, CEL, identities, actions)", (ref) => {
    const [kind = "", name = ""] = ref.split("/")
    expect(find(chart, kind, name).spec).toEqual(find(manifests, kind, name).spec)
  })

  it.each(["DaemonSet/nodemend-agent", "Deployment/nodemend-controller"])(
    "%s has the manifest's spec (images, args, NODE_OPTIONS, probes, resources, security)",
    (ref) => {
      const [kind = "", name = ""] = ref.split("/")
      expect(workloadSpec(find(chart, kind, name))).toEqual(workloadSpec(find(manifests, kind, name)))
    }
  )

  it.each(["DaemonSet/nodemend-agent", "Deployment/nodemend-controller"])(
    "%s keeps the manifest's V8 flags (NODE_OPTIONS or node's command line)",
    (ref) => {
      const [kind = "", name = ""] = ref.split("/")
      const v8Flags = (o: KubeObject) => {
        const container = (o as unknown as PodTemplateOwner).spec.template.spec.containers[0] ?? {}
        const env = (container.env ?? []) as { name: string; value?: string }[]
        const nodeOptions = env.find((e) => e.name === "NODE_OPTIONS")?.value?.split(/\s+/u) ?? []
        const command = ((container.command ?? []) as string[]).filter((a) => a.startsWith("--max-"))
        return [...nodeOptions, ...command].filter((f) => f !== "").sort()
      }
      const expected = v8Flags(find(manifests, kind, name))
      expect(expected).toContain("--max-semi-space-size=1")
      expect(v8Flags(find(chart, kind, name))).toEqual(expected)
    }
  )

  it.each([
    "FlowSchema/nodemend-controller-leader-election",
    "PodDisruptionBudget/nodemend-controller",
    "Service/nodemend-controller-metrics",
    "NetworkPolicy/nodemend-controller",
    "NetworkPolicy/nodemend-agent"
  ])("%s has the manifest's spec", (ref) => {
    const [kind = "", name = ""] = ref.split("/")
    expect(find(chart, kind, name).spec).toEqual(find(manifests, kind, name).spec)
  })

  it("the agent's config file is the manifest's, key for key", () => {
    const text = (objects: ReadonlyArray<KubeObject>) =>
      configText(objects, "nodemend-agent-config", "config.yaml")
    expect(parseYaml(text(chart))).toEqual(parseYaml(text(manifests)))
    const decoded = [chart, manifests].map((o) => parseConfigText(text(o)))
    expect(decoded.every(Result.isSuccess)).toBe(true)
  })

  it("the controller's config decodes to the manifest's configuration", () => {
    const resolved = (objects: ReadonlyArray<KubeObject>) => {
      const r = decodeConfig(parseYaml(configText(objects, "nodemend-controller", "controller.yaml")))
      if (Result.isFailure(r)) throw new Error(r.failure.message)
      // The manifest's aws: {} is a placeholder (an aws install must fill it in); its reasons entry is an
      // example with no knobs, which overrides nothing.
      const { aws: _aws, reasons, ...rest } = r.success
      return {
        ...rest,
        reasons: Object.fromEntries(Object.entries(reasons).filter(([, k]) => Object.keys(k).length > 0))
      }
    }
    expect(resolved(chart)).toEqual(resolved(manifests))
  })
})
