/**
 * `promisedGpus` on EC2 (issue #41): the NVIDIA GPUs a replacement's instance type promises, proven through EC2,
 * never from a label the node writes (contract 8). The Node's name is bound to its live instance as `inspect` and
 * the fleet inventory bind it (DescribeInstances filtered by the name, `instanceIsNode`); the instance's type is
 * EC2's, and its GPUs are DescribeInstanceTypes' `GpuInfo.Gpus[].Count`, summed over the NVIDIA devices (the ones
 * the `nvidia.com/gpu` resource counts; g4ad's AMD GPUs are not). A type's figures never change: they are asked
 * once per type and kept.
 */
import type { EC2Client, InstanceTypeInfo } from "@aws-sdk/client-ec2"
import { Effect } from "effect"
import type { CloudError, PromisedGpus } from "../CloudProvider.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import { describeByNames } from "./Ec2Inventory.ts"
import { instanceIsNode } from "./InstanceFacts.ts"

/** The NVIDIA GPUs of one type, as DescribeInstanceTypes reports them: 0 without GpuInfo. */
export const nvidiaGpusOf = (t: InstanceTypeInfo): number =>
  (t.GpuInfo?.Gpus ?? [])
    .filter((g) => (g.Manufacturer ?? "").toUpperCase() === "NVIDIA")
    .reduce((n, g) => n + (g.Count ?? 0), 0)

export const makePromisedGpus = (ec2: EC2Client) => {
  const byType = new Map<string, number>()
  const gpusOfType = (instanceType: string): Effect.Effect<number | undefined, CloudError> => {
    const known = byType.get(instanceType)
    if (known !== undefined) return Effect.succeed(known)
    return awsCall("DescribeInstanceTypes", (abortSignal) =>
      ec2.send(new Ec2Sdk.DescribeInstanceTypesCommand({ InstanceTypes: [instanceType as never] }), {
        abortSignal
      })
    ).pipe(
      Effect.map((out) => {
        const info = out.InstanceTypes?.find((t) => t.InstanceType === instanceType)
        if (info === undefined) return undefined
        const gpus = nvidiaGpusOf(info)
        byType.set(instanceType, gpus)
        return gpus
      })
    )
  }
  return (nodeName: string): Effect.Effect<PromisedGpus | undefined, CloudError> =>
    Effect.gen(function* () {
      const found = yield* describeByNames(ec2, [nodeName])
      const instance = found.find((i) => instanceIsNode(i, nodeName))
      const instanceType = instance?.InstanceType
      if (instance?.InstanceId === undefined || instanceType === undefined) return undefined
      const gpus = yield* gpusOfType(instanceType)
      return gpus === undefined ? undefined : { instanceId: instance.InstanceId, instanceType, gpus }
    }).pipe(Effect.withSpan("AwsCloudProvider.promisedGpus"))
}
