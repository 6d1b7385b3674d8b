// An EC2 Instance as nodemend reads it (table-driven, pure).
import type { Instance } from "@aws-sdk/client-ec2"
import { describe, expect, it } from "vitest"
import {
  instanceFacts,
  instanceIsNode,
  instanceState,
  replacementFrom,
  ownerOf
} from "../../src/cloud/aws/InstanceFacts.ts"

const ID = "i-0123456789abcdef0"
const DNS = "ip-10-2-37-118.us-west-2.compute.internal"

describe("instanceIsNode", () => {
  it.each([
    { name: DNS, is: true },
    { name: "IP-10-2-37-118.us-west-2.compute.internal", is: true },
    { name: "ip-10-2-37-118", is: true },
    { name: ID, is: true },
    { name: `${ID}.us-west-2.compute.internal`, is: true },
    { name: "ip-10-2-37-119.us-west-2.compute.internal", is: false },
    { name: "ip-10-2-37-118.evil", is: false },
    { name: "i-0123456789abcdef", is: false }
  ])("$name: $is", ({ name, is }) => {
    expect(instanceIsNode({ InstanceId: ID, PrivateDnsName: DNS }, name)).toBe(is)
  })

  it("an instance without name or id is nobody's", () => {
    expect(instanceIsNode({}, "")).toBe(false)
    expect(instanceIsNode({ PrivateDnsName: "" }, "ip-10-2-37-118")).toBe(false)
  })
})

describe("ownerOf: who owns an instance, from EC2's tags alone", () => {
  const tags = (t: Readonly<Record<string, string | undefined>>) => ({
    Tags: Object.entries(t).map(([Key, Value]) => ({ Key, Value: Value ?? "" }))
  })
  it.each([
    {
      t: { "aws:autoscaling:groupName": "g" },
      launch: { autoScalingGroup: "g" },
      owner: { kind: "autoScaling", group: "g" }
    },
    {
      t: { "aws:autoscaling:groupName": "g", "aws:ec2launchtemplate:id": "lt-1" },
      launch: { autoScalingGroup: "g", launchTemplateId: "lt-1" },
      owner: { kind: "autoScaling", group: "g" }
    },
    {
      t: { "karpenter.sh/nodeclaim": "gpu-abcde", "karpenter.sh/nodepool": "gpu" },
      launch: {},
      owner: { kind: "karpenter", nodeClaim: "gpu-abcde", nodePool: "gpu" }
    },
    {
      t: { "karpenter.k8s.aws/ec2nodeclass": "default", "karpenter.sh/nodepool": "gpu" },
      launch: {},
      owner: { kind: "karpenter", nodeClaim: "", nodePool: "gpu" }
    },
    {
      t: { "aws:ec2launchtemplate:id": "lt-1" },
      launch: { launchTemplateId: "lt-1" },
      owner: { kind: "standalone" }
    },
    // The default pool label is also a tag node groups carry and nodemend writes on its own replacements.
    {
      t: { "aws:ec2launchtemplate:id": "lt-1", "karpenter.sh/nodepool": "gpu" },
      launch: { launchTemplateId: "lt-1" },
      owner: { kind: "standalone" }
    }
  ] as const)("$t -> $owner", ({ t, launch, owner }) => {
    expect(ownerOf(tags(t), launch)).toEqual(owner)
  })
  it("no group, no Karpenter, no template: unknown, saying why", () => {
    const o = ownerOf({}, {})
    expect(o.kind).toBe("unknown")
    expect(o.kind === "unknown" ? o.why : "").toContain("aws:ec2launchtemplate:id")
  })
})

describe("instanceFacts", () => {
  const instance: Instance = {
    InstanceId: ID,
    InstanceType: "p5.48xlarge",
    SubnetId: "subnet-0a",
    State: { Name: "running" },
    Placement: { AvailabilityZone: "us-west-2a" },
    Tags: [
      { Key: "aws:ec2launchtemplate:id", Value: "lt-1" },
      { Key: "aws:ec2launchtemplate:version", Value: "3" },
      { Key: "aws:autoscaling:groupName", Value: "gpu-asg" },
      { Key: "karpenter.sh/nodepool", Value: "gpu" }
    ]
  }
  it("reads type, subnet, template, group, pool and zone from EC2", () => {
    expect(instanceFacts(instance, "karpenter.sh/nodepool")).toEqual({
      instanceId: ID,
      state: "running",
      zone: "us-west-2a",
      pool: "gpu",
      launch: {
        instanceType: "p5.48xlarge",
        subnetId: "subnet-0a",
        launchTemplateId: "lt-1",
        launchTemplateVersion: "3",
        autoScalingGroup: "gpu-asg"
      },
      owner: { kind: "autoScaling", group: "gpu-asg" }
    })
  })
  it("leaves out what EC2 does not say; an unknown state is not-found", () => {
    expect(instanceFacts({ State: { Name: "rebooting" as never } }, "nodemend.io/pool")).toMatchObject({
      instanceId: "",
      state: "not-found",
      launch: {},
      owner: { kind: "unknown" }
    })
    expect(instanceState(undefined)).toBe("not-found")
  })
})

describe("replacementFrom", () => {
  it.each([
    { i: undefined, zone: "us-west-2a", r: undefined },
    { i: { PrivateDnsName: DNS }, zone: "us-west-2a", r: undefined },
    { i: { InstanceId: ID }, zone: undefined, r: { instanceId: ID } },
    { i: { InstanceId: ID }, zone: "us-west-2a", r: { instanceId: ID, zone: "us-west-2a" } },
    {
      i: { InstanceId: ID, PrivateDnsName: DNS, Placement: { AvailabilityZone: "us-west-2b" } },
      zone: "us-west-2a",
      r: { instanceId: ID, nodeName: DNS, zone: "us-west-2b" }
    }
  ])("$i -> $r", ({ i, zone, r }) => {
    expect(replacementFrom(i, zone)).toEqual(r)
  })
})
