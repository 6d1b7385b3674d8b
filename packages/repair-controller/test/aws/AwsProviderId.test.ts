import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { InvalidProviderID } from "../../src/cloud/CloudProvider.ts"
import { formatAwsProviderId, parseAwsProviderId } from "../../src/cloud/aws/AwsProviderId.ts"

describe("parseAwsProviderId", () => {
  it("reads zone and instance id", () => {
    expect(parseAwsProviderId("aws:///us-west-2a/i-0123456789abcdef0")).toEqual({
      zone: "us-west-2a",
      instanceId: "i-0123456789abcdef0"
    })
    expect(parseAwsProviderId("aws:///us-gov-west-1b/i-0a1b2c3d")).toEqual({
      zone: "us-gov-west-1b",
      instanceId: "i-0a1b2c3d"
    })
    expect(parseAwsProviderId("aws:///us-west-2-lax-1a/i-0123456789abcdef0")).toMatchObject({
      zone: "us-west-2-lax-1a"
    })
  })

  it.each([
    "",
    "kwok://node-1",
    "aws://us-west-2a/i-0123456789abcdef0",
    "aws:///i-0123456789abcdef0",
    "aws:////i-0123456789abcdef0",
    "aws:///us-west-2a/",
    "aws:///us-west-2a/i-0123",
    "aws:///us-west-2a/i-0123456789ABCDEF0",
    "aws:///us-west-2a/i-0123456789abcdef0/extra",
    "aws:///us-east-1a/abc123/fargate-ip-10-0-0-1.ec2.internal",
    "aws:///US-WEST-2A/i-0123456789abcdef0",
    " aws:///us-west-2a/i-0123456789abcdef0"
  ])("rejects %j with InvalidProviderID", (providerID) => {
    const r = parseAwsProviderId(providerID)
    expect(r).toBeInstanceOf(InvalidProviderID)
    expect((r as InvalidProviderID).providerID).toBe(providerID)
    expect((r as InvalidProviderID).message).toContain(JSON.stringify(providerID))
  })

  it("round-trips every well-formed id", () => {
    const zone = fc
      .tuple(fc.constantFrom("us", "eu", "ap", "sa"), fc.constantFrom("west", "east", "central"), fc.nat(9))
      .chain(([a, b, n]) => fc.constantFrom("a", "b", "c").map((z) => `${a}-${b}-${n}${z}`))
    const hex = (n: number) =>
      fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n })
    const id = fc.oneof(hex(8), hex(17)).map((h) => `i-${h}`)
    fc.assert(
      fc.property(zone, id, (z, i) => {
        expect(parseAwsProviderId(formatAwsProviderId({ zone: z, instanceId: i }))).toEqual({
          zone: z,
          instanceId: i
        })
      })
    )
  })

  it("never throws and never returns an instance id that is not in the input", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = parseAwsProviderId(s)
        expect(r instanceof InvalidProviderID || s.endsWith(`/${r.instanceId}`)).toBe(true)
      })
    )
  })
})
