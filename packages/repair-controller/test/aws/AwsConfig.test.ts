import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { AwsConfig, TERMINATION_MODE_REMOVED, withEnvironmentRegion } from "../../src/config/AwsConfig.ts"

const decode = Schema.decodeUnknownSync(AwsConfig)
const ARN = "arn:aws:eks:us-west-2:111122223333:cluster/prod"

describe("AwsConfig", () => {
  it("fills defaults", () => {
    expect(decode({ region: "us-west-2", clusterArn: ARN })).toEqual({
      region: "us-west-2",
      clusterArn: ARN,
      endpoints: {},
      zonalShift: { enabled: true, cacheSeconds: 30 },
      maxAttempts: 5,
      requestTimeoutSeconds: 10,
      terminationWaitSeconds: 60,
      terminateBatchWindowMs: 100,
      poolLabel: "nodemend.io/pool",
      subnets: [],
      zoneIds: {}
    })
  })

  it("takes the environment's region when the section names none (EKS sets AWS_REGION)", () => {
    expect(withEnvironmentRegion({}, { AWS_REGION: "eu-west-1" })).toEqual({ region: "eu-west-1" })
    expect(withEnvironmentRegion({}, { AWS_DEFAULT_REGION: "eu-west-2" })).toEqual({ region: "eu-west-2" })
    expect(withEnvironmentRegion({ region: "us-west-2" }, { AWS_REGION: "eu-west-1" })).toEqual({
      region: "us-west-2"
    })
    expect(withEnvironmentRegion({}, {})).toEqual({})
  })

  it("starts without clusterArn (zonal shifts then fail closed, see AwsCloudProvider.test.ts)", () => {
    expect(decode({ region: "us-west-2" }).clusterArn).toBeUndefined()
  })

  it("rejects bad values with the path", () => {
    expect(() => decode({ region: "Oregon", clusterArn: ARN })).toThrow(/region/)
    expect(() => decode({ region: "us-west-2", clusterArn: "prod" })).toThrow(/clusterArn/)
    expect(() => decode({ region: "us-west-2", clusterArn: ARN, endpoints: { ec2: "localhost:1" } })).toThrow(
      /ec2/
    )
    expect(() => decode({ region: "us-west-2", clusterArn: ARN, maxAttempts: 0 })).toThrow(/maxAttempts/)
  })
})

describe("aws.terminationMode (removed in #16)", () => {
  it("is refused whatever its value, saying that group membership is read from the instance", () => {
    for (const terminationMode of ["ec2", "autoScaling", "asg"]) {
      expect(() => decode({ region: "us-west-2", terminationMode })).toThrow(TERMINATION_MODE_REMOVED)
    }
    expect(TERMINATION_MODE_REMOVED).toMatch(/^removed: .*aws:autoscaling:groupName tag/)
  })
})

describe("terminatedAt", () => {
  it("reads EC2's StateTransitionReason time", async () => {
    const { terminatedAt } = await import("../../src/cloud/aws/AutoScalingReplacement.ts")
    expect(terminatedAt("User initiated (2026-11-30 05:00:01 GMT)")).toBe(Date.UTC(2026, 10, 30, 5, 0, 1))
    expect(terminatedAt("")).toBeUndefined()
    expect(terminatedAt(undefined)).toBeUndefined()
  })
})
