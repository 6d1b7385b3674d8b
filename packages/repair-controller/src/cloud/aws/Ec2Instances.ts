/** Reading instances from EC2 (DescribeInstances). */
import type { EC2Client, Instance } from "@aws-sdk/client-ec2"
import { Effect } from "effect"
import type { CloudError, InstanceState } from "../CloudProvider.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall, whenNotFound } from "./Ec2ErrorMapping.ts"
import { instanceState } from "./InstanceFacts.ts"

export interface Ec2Instances {
  /** The instance, or undefined when EC2 no longer knows it. */
  readonly describe: (instanceId: string) => Effect.Effect<Instance | undefined, CloudError>
  /** Every instance EC2 reports for the ids (an unknown id fails the call). */
  readonly describeAll: (
    instanceIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Instance>, CloudError>
  /** The instance's state; `not-found` when EC2 no longer knows it. */
  readonly state: (instanceId: string) => Effect.Effect<InstanceState, CloudError>
}

export const makeEc2Instances = (ec2: EC2Client): Ec2Instances => {
  const describeAll = (instanceIds: ReadonlyArray<string>) =>
    awsCall("DescribeInstances", (abortSignal) =>
      ec2.send(new Ec2Sdk.DescribeInstancesCommand({ InstanceIds: [...instanceIds] }), { abortSignal })
    ).pipe(Effect.map((out) => (out.Reservations ?? []).flatMap((r) => r.Instances ?? [])))

  const describe = (instanceId: string) =>
    describeAll([instanceId]).pipe(
      Effect.map((all) => all.find((i) => i.InstanceId === instanceId)),
      whenNotFound(undefined)
    )

  const state = (instanceId: string) =>
    describe(instanceId).pipe(Effect.map((i) => (i ? instanceState(i.State?.Name) : "not-found")))

  return { describe, describeAll, state }
}
