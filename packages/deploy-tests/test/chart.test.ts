// The chart on its own: helm lint, renders for the supported shapes of install, and values the schema must
// refuse with a message naming the field. Rendered config files are decoded by the agent's and the
// controller's own config decoders, so a value that renders but would stop a binary at start-up fails here.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { CHECK_NAMES, parseConfigText } from "@nodemend/agent"
import { ConfigFileSchema, decodeConfig } from "@nodemend/repair-controller"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import {
  AWS_REQUIRED_VALUES,
  CHART_DIR,
  DEPLOY_DIR,
  find,
  type KubeObject,
  lint,
  render,
  template
} from "../src/index.ts"

const configData = (objects: ReadonlyArray<KubeObject>, name: string, key: string): string => {
  const data = find(objects, "ConfigMap", name).data as Record<string, string>
  const text = data[key]
  if (text === undefined) throw new Error(`ConfigMap ${name} has no ${key}`)
  return text
}

const controllerConfig = (objects: ReadonlyArray<KubeObject>) => {
  const text = configData(objects, "nodemend-controller", "controller.yaml")
  const decoded = decodeConfig(parseYaml(text), "controller.yaml")
  if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
  return decoded.success
}

const agentConfig = (objects: ReadonlyArray<KubeObject>) => {
  const decoded = parseConfigText(configData(objects, "nodemend-agent-config", "config.yaml"))
  if (Result.isFailure(decoded)) throw new Error(`${decoded.failure.field}: ${decoded.failure.detail}`)
  return decoded.success
}

const names = (objects: ReadonlyArray<KubeObject>) =>
  objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()

describe("helm lint", () => {
  it("passes (--strict) with the values an aws install needs, and for a kwok install", () => {
    const aws = lint(AWS_REQUIRED_VALUES)
    expect(aws.stderr + aws.stdout).toContain("0 chart(s) failed")
    expect(aws.status).toBe(0)
    const kwok = lint({ controller: { cloudProvider: "kwok" } })
    expect(kwok.status).toBe(0)
  })
})

describe("helm template", () => {
  it("default values + the required aws ones: agent and controller, configs the binaries accept", () => {
    const objects = render({ values: AWS_REQUIRED_VALUES })
    expect(names(objects)).toEqual(
      [
        "ClusterRole/nodemend-agent",
        "ClusterRole/nodemend-controller",
        "ClusterRole/nodemend-repair-requester",
        "ClusterRoleBinding/nodemend-agent",
        "ClusterRoleBinding/nodemend-controller",
        "ConfigMap/nodemend-agent-config",
        "ConfigMap/nodemend-controller",
        "DaemonSet/nodemend-agent",
        "Deployment/nodemend-controller",
        "FlowSchema/nodemend-controller-leader-election",
        "NetworkPolicy/nodemend-agent",
        "NetworkPolicy/nodemend-controller",
        "PodDisruptionBudget/nodemend-controller",
        "Role/nodemend-agent-events",
        "Role/nodemend-controller",
        "RoleBinding/nodemend-agent-events",
        "RoleBinding/nodemend-controller",
        "Service/nodemend-controller-metrics",
        "ServiceAccount/nodemend-agent",
        "ServiceAccount/nodemend-controller",
        "ValidatingAdmissionPolicy/nodemend-agent-events",
        "ValidatingAdmissionPolicy/nodemend-agent-nodediagnostics",
        "ValidatingAdmissionPolicy/nodemend-agent-nodes",
        "ValidatingAdmissionPolicy/nodemend-controller-events",
        "ValidatingAdmissionPolicy/nodemend-repair-requests",
        "ValidatingAdmissionPolicyBinding/nodemend-agent-events",
        "ValidatingAdmissionPolicyBinding/nodemend-agent-nodediagnostics",
        "ValidatingAdmissionPolicyBinding/nodemend-agent-nodes",
        "ValidatingAdmissionPolicyBinding/nodemend-controller-events",
        "ValidatingAdmissionPolicyBinding/nodemend-repair-requests"
      ].sort()
    )
    const config = controllerConfig(objects)
    expect(config).toMatchObject({
      cloudProvider: "aws",
      namespace: "nodemend-system",
      dryRun: false,
      maxUnhealthyPercent: 20,
      leaderElection: { enabled: true, leaseName: "nodemend-controller" },
      server: { port: 8080 }
    })
    expect(config.aws).toEqual(AWS_REQUIRED_VALUES.controller.aws)
    expect(agentConfig(objects).heartbeatSeconds).toBe(300)
    expect((find(objects, "Deployment", "nodemend-controller").spec as { replicas: number }).replicas).toBe(2)
  })

  it("values reach the controller's config: dryRun, breaker percent, leader election, release namespace", () => {
    const objects = render({
      namespace: "nm-ops",
      values: {
        controller: {
          ...AWS_REQUIRED_VALUES.controller,
          dryRun: true,
          maxUnhealthyPercent: 7.5,
          replicas: 3,
          leaderElection: {
            enabled: true,
            leaseName: "nm-lease",
            leaseDurationSeconds: 30,
            renewIntervalSeconds: 5
          },
          config: {
            pools: { "gpu-h100": { maxUnhealthyPercent: 10, replacementDiagnostic: { dcgmLevel: 1 } } },
            drain: { onDeadline: "wait" }
          }
        }
      }
    })
    const config = controllerConfig(objects)
    expect(config).toMatchObject({
      dryRun: true,
      maxUnhealthyPercent: 7.5,
      namespace: "nm-ops",
      leaderElection: {
        enabled: true,
        leaseName: "nm-lease",
        leaseDurationSeconds: 30,
        renewIntervalSeconds: 5
      },
      pools: { "gpu-h100": { maxUnhealthyPercent: 10, replacementDiagnostic: { dcgmLevel: 1 } } },
      drain: { onDeadline: "wait", deadlineSeconds: 600 }
    })
    expect(find(objects, "Deployment", "nodemend-controller").metadata.namespace).toBe("nm-ops")
    expect(find(objects, "Role", "nodemend-controller").metadata.namespace).toBe("nm-ops")
    expect((find(objects, "Deployment", "nodemend-controller").spec as { replicas: number }).replicas).toBe(3)
  })

  it("agent only: no controller objects, and no aws values needed", () => {
    const objects = render({ values: { controller: { enabled: false } } })
    expect(names(objects)).toEqual([
      "ClusterRole/nodemend-agent",
      "ClusterRoleBinding/nodemend-agent",
      "ConfigMap/nodemend-agent-config",
      "DaemonSet/nodemend-agent",
      "NetworkPolicy/nodemend-agent",
      "Role/nodemend-agent-events",
      "RoleBinding/nodemend-agent-events",
      "ServiceAccount/nodemend-agent",
      "ValidatingAdmissionPolicy/nodemend-agent-events",
      "ValidatingAdmissionPolicy/nodemend-agent-nodediagnostics",
      "ValidatingAdmissionPolicy/nodemend-agent-nodes",
      "ValidatingAdmissionPolicyBinding/nodemend-agent-events",
      "ValidatingAdmissionPolicyBinding/nodemend-agent-nodediagnostics",
      "ValidatingAdmissionPolicyBinding/nodemend-agent-nodes"
    ])
    expect(find(objects, "DaemonSet", "nodemend-agent").metadata.namespace).toBe("kube-system")
    // Node events live in `default`: the agent's event rights are there, bound to its service account
    expect(find(objects, "Role", "nodemend-agent-events").metadata.namespace).toBe("default")
    expect(find(objects, "RoleBinding", "nodemend-agent-events")).toMatchObject({
      metadata: { namespace: "default" },
      subjects: [{ kind: "ServiceAccount", name: "nodemend-agent", namespace: "kube-system" }]
    })
  })

  it("controller only: no agent objects", () => {
    const objects = render({ values: { ...AWS_REQUIRED_VALUES, agent: { enabled: false } } })
    expect(names(objects).filter((n) => n.includes("agent"))).toEqual([])
    expect(names(objects)).toContain("Deployment/nodemend-controller")
    expect(names(objects)).toContain("ValidatingAdmissionPolicy/nodemend-controller-events")
  })

  it("kwok provider: no aws section needed, the kwok section reaches the config", () => {
    const objects = render({
      values: {
        controller: { cloudProvider: "kwok", kwok: { replacementDelaySeconds: 1, zonalShiftConfigMap: "zs" } }
      }
    })
    const config = controllerConfig(objects)
    expect(config.cloudProvider).toBe("kwok")
    expect(config.kwok).toMatchObject({ replacementDelaySeconds: 1, zonalShiftConfigMap: "zs" })
  })

  it("only the kwok provider may create Nodes and patch their status (least privilege for aws)", () => {
    const nodeRules = (objects: ReadonlyArray<KubeObject>) => {
      const role = objects.find(
        (o) => o.kind === "ClusterRole" && o.metadata?.name === "nodemend-controller"
      ) as
        | { rules: ReadonlyArray<{ resources: ReadonlyArray<string>; verbs: ReadonlyArray<string> }> }
        | undefined
      expect(role).toBeDefined()
      return {
        nodes: role?.rules.find((r) => r.resources.includes("nodes"))?.verbs ?? [],
        status: role?.rules.find((r) => r.resources.includes("nodes/status"))?.verbs ?? []
      }
    }
    const aws = nodeRules(render({ values: AWS_REQUIRED_VALUES }))
    expect(aws.nodes).not.toContain("create")
    expect(aws.status).toEqual([])
    const kwok = nodeRules(render({ values: { controller: { cloudProvider: "kwok" } } }))
    expect(kwok.nodes).toContain("create")
    expect(kwok.status).toEqual(["patch"])
  })

  it("pods delete only when some drain can be forced (drain.onDeadline, or a policy's or reason's drainMode)", () => {
    const podVerbs = (config: Record<string, unknown>) => {
      const role = find(
        render({ values: { controller: { ...AWS_REQUIRED_VALUES.controller, config } } }),
        "ClusterRole",
        "nodemend-controller"
      ) as unknown as {
        rules: ReadonlyArray<{ resources: ReadonlyArray<string>; verbs: ReadonlyArray<string> }>
      }
      return role.rules.find((r) => r.resources.includes("pods"))?.verbs
    }
    expect(podVerbs({})).toEqual(["list", "delete"]) // the default: onDeadline force
    const wait = { drain: { onDeadline: "wait" } }
    expect(podVerbs(wait)).toEqual(["list"])
    expect(
      podVerbs({ ...wait, policies: [{ conditionType: "KernelReady", status: "False", drainMode: "wait" }] })
    ).toEqual(["list"])
    expect(
      podVerbs({
        ...wait,
        policies: [{ conditionType: "AcceleratedHardwareReady", status: "False", drainMode: "force" }]
      })
    ).toEqual(["list", "delete"])
    expect(podVerbs({ ...wait, reasons: { "NvidiaXID{code}Error": { drainMode: "force" } } })).toEqual([
      "list",
      "delete"
    ])
  })

  it("admission policies name the agent's and the controller's service accounts in their namespaces", () => {
    const objects = render({
      namespace: "nm-ops",
      values: { ...AWS_REQUIRED_VALUES, agent: { namespace: "" } }
    })
    type Policy = { spec: { matchConditions: ReadonlyArray<{ expression: string }> } }
    for (const name of ["nodemend-agent-nodes", "nodemend-agent-nodediagnostics", "nodemend-agent-events"]) {
      const policy = find(objects, "ValidatingAdmissionPolicy", name) as unknown as Policy
      expect(policy.spec.matchConditions).toEqual([
        {
          name: "nodemend-agent",
          expression: "request.userInfo.username == 'system:serviceaccount:nm-ops:nodemend-agent'"
        }
      ])
      expect(find(objects, "ValidatingAdmissionPolicyBinding", name).spec).toEqual({
        policyName: name,
        validationActions: ["Deny"]
      })
    }
    const controller = find(
      objects,
      "ValidatingAdmissionPolicy",
      "nodemend-controller-events"
    ) as unknown as Policy
    expect(controller.spec.matchConditions[0]?.expression).toBe(
      "request.userInfo.username != 'system:serviceaccount:nm-ops:nodemend-controller'"
    )
  })

  it("agent config values reach the ConfigMap and the agent accepts them", () => {
    const objects = render({
      values: {
        controller: { enabled: false },
        agent: { config: { heartbeatSeconds: 60, checks: { "efa-counters": { intervalSeconds: 30 } } } }
      }
    })
    const config = agentConfig(objects)
    expect(config.heartbeatSeconds).toBe(60)
    expect(config.monitors.kernel?.thresholds?.zombieCount).toBe(20) // defaults from values.yaml kept
  })

  it("IRSA: service account annotations; scheduling values reach the pod specs", () => {
    const roleArn = "arn:aws:iam::111122223333:role/nodemend-controller"
    const objects = render({
      values: {
        controller: {
          ...AWS_REQUIRED_VALUES.controller,
          serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": roleArn } },
          nodeSelector: { "node-role": "system" }
        },
        agent: { nodeSelector: { "nodemend.io/pool": "gpu" }, tolerations: [] }
      }
    })
    expect(find(objects, "ServiceAccount", "nodemend-controller").metadata.annotations).toEqual({
      "eks.amazonaws.com/role-arn": roleArn
    })
    const pod = (kind: string, name: string) =>
      (find(objects, kind, name).spec as { template: { spec: Record<string, unknown> } }).template.spec
    expect(pod("DaemonSet", "nodemend-agent").nodeSelector).toEqual({
      "kubernetes.io/os": "linux",
      "nodemend.io/pool": "gpu"
    })
    expect(pod("DaemonSet", "nodemend-agent").tolerations).toBeUndefined()
    expect(pod("Deployment", "nodemend-controller").nodeSelector).toEqual({ "node-role": "system" })
  })

  it("a config change changes the pod template (rolls the pods)", () => {
    const checksum = (values: Record<string, unknown>) =>
      (
        find(render({ values }), "Deployment", "nodemend-controller").spec as {
          template: { metadata: { annotations: Record<string, string> } }
        }
      ).template.metadata.annotations["checksum/config"]
    const a = checksum({ controller: { cloudProvider: "kwok" } })
    expect(a).toMatch(/^[0-9a-f]{64}$/u)
    expect(checksum({ controller: { cloudProvider: "kwok", dryRun: true } })).not.toBe(a)
  })
})

describe("invalid values fail with the field named", () => {
  const refused: ReadonlyArray<[string, Record<string, unknown>, RegExp]> = [
    ["aws without region or clusterArn", {}, /\/controller\/aws': missing property 'region'/u],
    [
      "aws with zonal shifts but no clusterArn",
      { controller: { aws: { region: "us-west-2" } } },
      /\/controller\/aws': missing property 'clusterArn'/u
    ],
    [
      "a malformed region",
      { controller: { aws: { region: "Oregon", zonalShift: { enabled: false } } } },
      /\/controller\/aws\/region'/u
    ],
    [
      "an unknown cloud provider",
      { controller: { cloudProvider: "gcp" } },
      /\/controller\/cloudProvider'.*'aws', 'kwok'/u
    ],
    [
      "two replicas without leader election",
      { controller: { cloudProvider: "kwok", leaderElection: { enabled: false } } },
      /\/controller\/replicas': value must be 1/u
    ],
    [
      "a breaker percent over 100",
      { controller: { cloudProvider: "kwok", maxUnhealthyPercent: 120 } },
      /\/controller\/maxUnhealthyPercent'/u
    ],
    [
      "an unknown controller config key",
      { controller: { cloudProvider: "kwok", config: { dryrun: true } } },
      /\/controller\/config': additional properties 'dryrun' not allowed/u
    ],
    [
      "a controller config key that is a value of its own",
      { controller: { cloudProvider: "kwok", config: { cloudProvider: "aws" } } },
      /additional properties 'cloudProvider' not allowed/u
    ],
    [
      "an unknown agent config key",
      { controller: { enabled: false }, agent: { config: { heartbeat: 10 } } },
      /\/agent\/config': additional properties 'heartbeat' not allowed/u
    ],
    [
      "a string where a boolean belongs",
      { controller: { cloudProvider: "kwok", dryRun: "yes" } },
      /\/controller\/dryRun'.*boolean/u
    ],
    [
      "an unknown top-level key",
      { agents: { enabled: true } },
      /additional properties 'agents' not allowed/u
    ],
    [
      "a misspelt agent monitor",
      { controller: { enabled: false }, agent: { config: { monitors: { nvida: { enabled: false } } } } },
      /\/agent\/config\/monitors': additional properties 'nvida' not allowed/u
    ],
    [
      "an unknown agent check",
      { controller: { enabled: false }, agent: { config: { checks: { "ipamd-stat": { enabled: false } } } } },
      /\/agent\/config\/checks': additional properties 'ipamd-stat' not allowed/u
    ],
    [
      "an unknown key of an agent check",
      { controller: { enabled: false }, agent: { config: { checks: { npa: { interval: 60 } } } } },
      /\/agent\/config\/checks\/npa': additional properties 'interval' not allowed/u
    ]
  ]
  it.each(refused)("%s", (_what, values, message) => {
    const r = template({ values })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("values don't meet the specifications of the schema")
    expect(r.stderr).toMatch(message)
  })
})

describe("the schema's agent config keys are the agent's", () => {
  const agentConfigSchema = (
    JSON.parse(readFileSync(join(CHART_DIR, "values.schema.json"), "utf8")) as {
      properties: {
        agent: { properties: { config: { properties: Record<string, Record<string, unknown>> } } }
      }
    }
  ).properties.agent.properties.config.properties
  it("check names: exactly the agent's CHECK_NAMES", () => {
    const names = Object.keys(agentConfigSchema.checks?.properties as Record<string, unknown>)
    expect(names.sort()).toEqual([...CHECK_NAMES].sort())
  })
  it("monitor names: each one the agent accepts, and the agent refuses the rest", () => {
    const monitors = Object.keys(agentConfigSchema.monitors?.properties as Record<string, unknown>)
    for (const m of monitors)
      expect(Result.isSuccess(parseConfigText(`monitors:\n  ${JSON.stringify(m)}: {}\n`)), m).toBe(true)
    expect(Result.isSuccess(parseConfigText("monitors:\n  nvida: {}\n"))).toBe(false)
  })
})

describe("the schema's controller pool keys are the controller's", () => {
  it("every key of a pool in controller.config.pools, and only those", () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, "values.schema.json"), "utf8")) as {
      properties: {
        controller: {
          properties: {
            config: {
              properties: { pools: { additionalProperties: { properties: Record<string, unknown> } } }
            }
          }
        }
      }
    }
    const chartKeys = Object.keys(
      schema.properties.controller.properties.config.properties.pools.additionalProperties.properties
    )
    // The controller's own schema of a pool (config/ConfigFileSchema.ts PoolFile), as its config file takes it.
    const pools = ConfigFileSchema.fields.pools as unknown as {
      schema: { value: { fields: Record<string, unknown> } }
    }
    expect(chartKeys.sort()).toEqual(Object.keys(pools.schema.value.fields).sort())
  })
})

describe("chart files", () => {
  it.each(["nodediagnostics.nodemend.io.yaml", "repairrequests.nodemend.io.yaml"])(
    "crds/ carries deploy/crds/%s unchanged",
    (file) => {
      expect(readFileSync(join(CHART_DIR, "crds", file), "utf8")).toBe(
        readFileSync(join(DEPLOY_DIR, "crds", file), "utf8")
      )
    }
  )
})
