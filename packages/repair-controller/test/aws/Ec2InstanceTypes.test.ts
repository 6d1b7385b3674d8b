// What a machine's type promises in GPUs on EC2 (`promisedGpus`, issue #41): the real AWS SDK against the fake cloud's
// DescribeInstances and DescribeInstanceTypes. The Node's name is bound to its instance as inspect binds it; the
// type's NVIDIA GPUs are summed from GpuInfo; a type is asked once.
import { AdminClient, type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CloudProvider } from "../../src/cloud/CloudProvider.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { nvidiaGpusOf } from "../../src/cloud/aws/Ec2InstanceTypes.ts"
import { awsConfig, clientsFor } from "./support.ts"

let cloud: FakeCloud
let admin: AdminClient
const names: Record<string, string> = {}

beforeAll(async () => {
  cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 10, terminateDelayMs: 10 })
  admin = new AdminClient(cloud.url)
  for (const [i, type] of ["p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "m5.large", "p5.48xlarge"].entries())
    names[`${type}#${i}`] = (
      await admin.adopt({
        nodeName: `ip-10-9-0-${i + 1}.us-west-2.compute.internal`,
        instanceType: type,
        zone: "us-west-2a"
      })
    ).nodeName
}, 60_000)
afterAll(() => cloud.close())

const promised = (name: string) =>
  Effect.gen(function* () {
    const p = yield* CloudProvider
    if (p.promisedGpus === undefined) throw new Error("the AWS provider has no promisedGpus")
    return yield* p.promisedGpus(name)
  })
const typeCalls = () =>
  Effect.promise(() => admin.stats()).pipe(Effect.map((s) => s.calls.DescribeInstanceTypes ?? 0))

describe("promisedGpus (DescribeInstances + DescribeInstanceTypes)", () => {
  it.live(
    "each Node's instance type's NVIDIA GPUs, from EC2; a type asked once; an unknown name undefined",
    () => {
      const config = awsConfig(cloud.url)
      return Effect.gen(function* () {
        const before = yield* typeCalls()
        const p5 = yield* promised(names["p5.48xlarge#0"]!)
        expect(p5).toMatchObject({ instanceType: "p5.48xlarge", gpus: 8 })
        expect(p5?.instanceId).toMatch(/^i-[0-9a-f]+$/)
        expect(yield* promised(names["p4d.24xlarge#1"]!)).toMatchObject({
          instanceType: "p4d.24xlarge",
          gpus: 8
        })
        expect(yield* promised(names["g5.xlarge#2"]!)).toMatchObject({ instanceType: "g5.xlarge", gpus: 1 })
        expect(yield* promised(names["m5.large#3"]!)).toMatchObject({ instanceType: "m5.large", gpus: 0 })
        // Another p5: its type is known already.
        expect(yield* promised(names["p5.48xlarge#4"]!)).toMatchObject({ gpus: 8 })
        expect((yield* typeCalls()) - before).toBe(4)
        // The short name (the DNS name's first label) is the instance's too; a name EC2 does not know is no machine.
        expect(yield* promised("ip-10-9-0-1")).toMatchObject({ gpus: 8 })
        expect(yield* promised("ip-10-9-9-9.us-west-2.compute.internal")).toBeUndefined()
      }).pipe(Effect.provide(AwsCloudProvider.layerWithClients(config, clientsFor(config))))
    }
  )

  it("sums NVIDIA devices only (the nvidia.com/gpu resource); no GpuInfo is 0", () => {
    expect(
      nvidiaGpusOf({
        GpuInfo: {
          Gpus: [
            { Name: "H100", Manufacturer: "NVIDIA", Count: 8 },
            { Name: "Radeon Pro V520", Manufacturer: "AMD", Count: 1 }
          ]
        }
      })
    ).toBe(8)
    expect(nvidiaGpusOf({ InstanceType: "m5.large" })).toBe(0)
  })
})
