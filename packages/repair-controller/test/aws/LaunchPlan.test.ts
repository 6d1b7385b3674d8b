// launchPlan: what a replacement gets, from the inspected facts only (table-driven, pure).
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { InstanceFacts } from "../../src/cloud/CloudProvider.ts"
import { clientTokenFor, type LaunchSettings, launchPlan } from "../../src/cloud/aws/LaunchPlan.ts"

const OLD = { zone: "us-west-2a", instanceId: "i-0123456789abcdef0" }
const LT = "lt-0123456789abcdef0"
const settings: LaunchSettings = {
  poolLabel: "nodemend.io/pool",
  subnets: [
    { subnetId: "subnet-0b", zone: "us-west-2b" }, // no zoneId in config: known only through zoneIdOf
    { subnetId: "subnet-0c", zone: "us-west-2c", zoneId: "usw2-az3" }
  ],
  zoneIdOf: (zone) => ({ "us-west-2a": "usw2-az1", "us-west-2b": "usw2-az2" })[zone]
}
const facts = (launch: Record<string, string>, extra: Partial<InstanceFacts> = {}): InstanceFacts => ({
  instanceId: OLD.instanceId,
  state: "running",
  zone: "us-west-2a",
  pool: "gpu",
  launch: { instanceType: "p5.48xlarge", subnetId: "subnet-0a", launchTemplateId: LT, ...launch },
  owner: { kind: "standalone" },
  ...extra
})
/** The facts as instanceFacts writes them when EC2 reports no such value: the key is absent. */
const without = (f: InstanceFacts, key: string): InstanceFacts => ({
  ...f,
  launch: Object.fromEntries(Object.entries(f.launch).filter(([k]) => k !== key))
})
const plan = (f: InstanceFacts, avoid: ReadonlyArray<string> = []) =>
  Result.getOrThrow(launchPlan(f, avoid, settings, OLD))
const refusal = (f: InstanceFacts, avoid: ReadonlyArray<string> = []) => {
  const r = launchPlan(f, avoid, settings, OLD)
  return Result.isFailure(r) ? r.failure : "(planned)"
}

describe("launchPlan: where the replacement goes", () => {
  it.each([
    {
      why: "zone not avoided: the old instance's own subnet",
      avoid: [],
      zone: "us-west-2a",
      subnet: "subnet-0a"
    },
    { why: "another zone avoided", avoid: ["us-west-2c"], zone: "us-west-2a", subnet: "subnet-0a" },
    { why: "avoided by zone name", avoid: ["us-west-2a"], zone: "us-west-2b", subnet: "subnet-0b" },
    { why: "avoided by zone id", avoid: ["usw2-az1"], zone: "us-west-2b", subnet: "subnet-0b" },
    {
      why: "first configured subnet avoided by the id zoneIdOf knows",
      avoid: ["usw2-az1", "usw2-az2"],
      zone: "us-west-2c",
      subnet: "subnet-0c"
    },
    {
      why: "configured subnet avoided by its configured zoneId",
      avoid: ["us-west-2a", "us-west-2b", "usw2-az3"],
      zone: undefined,
      subnet: undefined
    }
  ])("$why", ({ avoid, zone, subnet }) => {
    if (zone === undefined) {
      expect(refusal(facts({}), avoid)).toBe(
        `zone us-west-2a is shifted away and aws.subnets lists no subnet outside ${avoid.join(", ")}`
      )
    } else {
      const p = plan(facts({}), avoid)
      expect(p.zone).toBe(zone)
      expect(p.input.SubnetId).toBe(subnet)
      expect(p.input.Placement).toBeUndefined()
    }
  })

  it.each([
    {
      why: "no subnet on the instance: the configured one in its zone",
      zone: "us-west-2b",
      subnet: "subnet-0b"
    },
    { why: "no subnet anywhere for the zone: placed by zone", zone: "us-west-2d", subnet: undefined }
  ])("$why", ({ zone, subnet }) => {
    const p = plan(without(facts({}, { zone }), "subnetId"))
    expect(p.zone).toBe(zone)
    expect(p.input.SubnetId).toBe(subnet)
    expect(p.input.Placement).toEqual(subnet ? undefined : { AvailabilityZone: zone })
  })

  it("without a zone in the facts, the providerID's zone", () => {
    const { zone: _, ...noZone } = facts({})
    expect(plan(noZone, ["us-west-2a"]).zone).toBe("us-west-2b")
  })
})

describe("launchPlan: template, type, tags", () => {
  it.each<{ why: string; launch: Record<string, string>; version: string }>([
    {
      why: "template version recorded on the instance",
      launch: { launchTemplateVersion: "7" },
      version: "7"
    },
    { why: "no version recorded: the template's default", launch: {}, version: "$Default" }
  ])("$why", ({ launch, version }) => {
    const p = plan(facts(launch))
    expect(p.input.LaunchTemplate).toEqual({ LaunchTemplateId: LT, Version: version })
    expect(p.input.InstanceType).toBe("p5.48xlarge")
    expect([p.input.MinCount, p.input.MaxCount]).toEqual([1, 1])
    expect(p.input.ClientToken).toBeUndefined()
  })

  it.each([
    {
      why: "pool tag present: carried under poolLabel",
      pool: "gpu",
      tags: [
        { Key: "nodemend.io/pool", Value: "gpu" },
        { Key: "nodemend.io/replaces", Value: OLD.instanceId }
      ]
    },
    {
      why: "pool tag absent: none written",
      pool: undefined,
      tags: [{ Key: "nodemend.io/replaces", Value: OLD.instanceId }]
    }
  ])("$why", ({ pool, tags }) => {
    const { pool: _, ...noPool } = facts({})
    const p = plan(pool === undefined ? noPool : { ...noPool, pool })
    expect(p.input.TagSpecifications).toEqual([{ ResourceType: "instance", Tags: tags }])
  })

  it.each([
    {
      why: "no launch template tag",
      key: "launchTemplateId",
      reason: /^instance i-0123456789abcdef0 carries no aws:ec2launchtemplate:id tag/
    },
    { why: "no instance type", key: "instanceType", reason: /^EC2 reports no instance type for i-/ }
  ])("refuses: $why", ({ key, reason }) => {
    expect(refusal(without(facts({}), key))).toMatch(reason)
  })
})

describe("clientTokenFor", () => {
  it.each([
    { token: "repair-abc", same: true },
    { token: "x".repeat(64), same: true },
    { token: "x".repeat(65), same: false },
    { token: "has space", same: false }
  ])("$token.length chars, same=$same", ({ token, same }) => {
    const t = clientTokenFor(token)
    expect(t === token).toBe(same)
    expect(t).toMatch(/^[\x21-\x7e]{1,64}$/)
    expect(clientTokenFor(token)).toBe(t)
  })
})
