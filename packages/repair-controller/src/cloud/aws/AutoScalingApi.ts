/** The EC2 Auto Scaling calls the provider makes, one Effect each (errors mapped to CloudError). */
import type {
  Activity,
  AutoScalingClient,
  AutoScalingGroup,
  AutoScalingInstanceDetails
} from "@aws-sdk/client-auto-scaling"
import { Effect } from "effect"
import type { CloudError } from "../CloudProvider.ts"
import { AutoScalingSdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"

export interface AutoScalingApi {
  /** The instance's membership (group, lifecycle state); none when it is in no group. */
  readonly membership: (
    instanceId: string
  ) => Effect.Effect<AutoScalingInstanceDetails | undefined, CloudError>
  /** The group; none when it does not exist. */
  readonly describeGroup: (group: string) => Effect.Effect<AutoScalingGroup | undefined, CloudError>
  /** SetDesiredCapacity to an absolute size, cooldown not honoured (a repair is not a scaling policy). */
  readonly setDesiredCapacity: (group: string, desired: number) => Effect.Effect<void, CloudError>
  readonly terminateInGroup: (instanceId: string, decrement: boolean) => Effect.Effect<void, CloudError>
  /** The group's recent scaling activities, newest first. */
  readonly activities: (group: string) => Effect.Effect<ReadonlyArray<Activity>, CloudError>
}

export const makeAutoScalingApi = (client: AutoScalingClient): AutoScalingApi => ({
  membership: (instanceId) =>
    awsCall("DescribeAutoScalingInstances", (abortSignal) =>
      client.send(new AutoScalingSdk.DescribeAutoScalingInstancesCommand({ InstanceIds: [instanceId] }), {
        abortSignal
      })
    ).pipe(Effect.map((out) => out.AutoScalingInstances?.find((i) => i.InstanceId === instanceId))),
  describeGroup: (group) =>
    awsCall("DescribeAutoScalingGroups", (abortSignal) =>
      client.send(new AutoScalingSdk.DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] }), {
        abortSignal
      })
    ).pipe(Effect.map((out) => out.AutoScalingGroups?.find((g) => g.AutoScalingGroupName === group))),
  setDesiredCapacity: (group, desired) =>
    awsCall("SetDesiredCapacity", (abortSignal) =>
      client.send(
        new AutoScalingSdk.SetDesiredCapacityCommand({
          AutoScalingGroupName: group,
          DesiredCapacity: desired,
          HonorCooldown: false
        }),
        { abortSignal }
      )
    ).pipe(Effect.asVoid),
  terminateInGroup: (instanceId, decrement) =>
    awsCall("TerminateInstanceInAutoScalingGroup", (abortSignal) =>
      client.send(
        new AutoScalingSdk.TerminateInstanceInAutoScalingGroupCommand({
          InstanceId: instanceId,
          ShouldDecrementDesiredCapacity: decrement
        }),
        { abortSignal }
      )
    ).pipe(Effect.asVoid),
  activities: (group) =>
    awsCall("DescribeScalingActivities", (abortSignal) =>
      client.send(
        new AutoScalingSdk.DescribeScalingActivitiesCommand({ AutoScalingGroupName: group, MaxRecords: 20 }),
        { abortSignal }
      )
    ).pipe(Effect.map((out) => out.Activities ?? []))
})
