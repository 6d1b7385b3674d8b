/**
 * Auto Scaling mode (`terminationMode: autoScaling`): an instance in a group is terminated through the group with
 * ShouldDecrementDesiredCapacity=false, so the group launches the replacement and nodemend only reports which
 * member it is (AutoScalingReplacement.ts). Instances in no group take the EC2 path. What this controller did is
 * remembered so that asking again gives the same answer; after a restart the old instance's group tag and
 * termination time stand in, and an instance that is gone in no known group is never replaced by us (its group
 * may have done so already).
 */
import type { AutoScalingClient } from "@aws-sdk/client-auto-scaling"
import { Effect, Option } from "effect"
import { CloudError, type InstanceFacts, type InstanceState, type Replacement } from "../CloudProvider.ts"
import {
  newestReplacement,
  type ReplacementSearch,
  replacementCandidates,
  terminatedAt
} from "./AutoScalingReplacement.ts"
import type { AwsInstanceRef } from "./AwsProviderId.ts"
import { AutoScalingSdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import type { Ec2Instances } from "./Ec2Instances.ts"
import { type Ec2LaunchFacts, isGone, replacementFrom } from "./InstanceFacts.ts"

export interface AutoScalingGroups {
  /** Terminates through the instance's group; none when it is in no group (the caller uses EC2, noted here). */
  readonly terminate: (instanceId: string) => Effect.Effect<Option.Option<InstanceState>, CloudError>
  /**
   * The group's replacement of the instance (a retryable CloudError until the group has launched it); none when it
   * has no group and nodemend launches the replacement itself.
   */
  readonly replacement: (
    nodeName: string,
    old: AwsInstanceRef,
    facts: InstanceFacts
  ) => Effect.Effect<Option.Option<Replacement>, CloudError>
}

export const makeAutoScalingGroups = (
  autoScaling: AutoScalingClient,
  instances: Ec2Instances
): AutoScalingGroups => {
  /** The group members when we terminated each instance through its group. */
  const terminations = new Map<string, { readonly group: string; readonly before: ReadonlySet<string> }>()
  /** Instances we terminated through EC2 because they were in no group. */
  const ec2Terminations = new Set<string>()
  /** The replacement found for each terminated instance. */
  const replacements = new Map<string, Replacement>()

  const groupOf = (instanceId: string) =>
    awsCall("DescribeAutoScalingInstances", (abortSignal) =>
      autoScaling.send(
        new AutoScalingSdk.DescribeAutoScalingInstancesCommand({ InstanceIds: [instanceId] }),
        {
          abortSignal
        }
      )
    ).pipe(
      Effect.map(
        (out) => out.AutoScalingInstances?.find((i) => i.InstanceId === instanceId)?.AutoScalingGroupName
      )
    )

  const describeGroup = (group: string) =>
    awsCall("DescribeAutoScalingGroups", (abortSignal) =>
      autoScaling.send(
        new AutoScalingSdk.DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] }),
        {
          abortSignal
        }
      )
    ).pipe(Effect.map((out) => out.AutoScalingGroups?.find((g) => g.AutoScalingGroupName === group)))

  const terminate = (instanceId: string) =>
    Effect.gen(function* () {
      const group = yield* groupOf(instanceId)
      if (!group) {
        ec2Terminations.add(instanceId)
        return Option.none()
      }
      const members = (yield* describeGroup(group))?.Instances ?? []
      terminations.set(instanceId, { group, before: new Set(members.flatMap((i) => i.InstanceId ?? [])) })
      yield* awsCall("TerminateInstanceInAutoScalingGroup", (abortSignal) =>
        autoScaling.send(
          new AutoScalingSdk.TerminateInstanceInAutoScalingGroupCommand({
            InstanceId: instanceId,
            ShouldDecrementDesiredCapacity: false
          }),
          { abortSignal }
        )
      )
      return Option.some<InstanceState>("shutting-down")
    })

  const waiting = (operation: string, message: string) =>
    new CloudError({ operation, message, retryable: true })

  /** The member the group launched in place of `search.old`; asked again, the same one. */
  const groupReplacement = (group: string, search: ReplacementSearch) =>
    Effect.gen(function* () {
      const g = yield* describeGroup(group)
      if (!g) {
        return yield* new CloudError({
          operation: "DescribeAutoScalingGroups",
          message: `Auto Scaling group ${group} of instance ${search.old} does not exist`,
          retryable: false
        })
      }
      const candidates = replacementCandidates(g.Instances ?? [], search)
      if (candidates.length === 0) {
        const message = `waiting for Auto Scaling group ${group} to launch the replacement of ${search.old}`
        return yield* waiting("DescribeAutoScalingGroups", message)
      }
      const replacement = replacementFrom(newestReplacement(yield* instances.describeAll(candidates), search))
      if (!replacement) {
        const message = `the replacement of ${search.old} in ${group} is not visible in EC2 yet`
        return yield* waiting("DescribeInstances", message)
      }
      replacements.set(search.old, replacement)
      return replacement
    })

  const replacement = (nodeName: string, old: AwsInstanceRef, facts: InstanceFacts) =>
    Effect.gen(function* () {
      const id = old.instanceId
      // After termination the instance has left the group, so also look at what we recorded and at the
      // `aws:autoscaling:groupName` tag EC2 Auto Scaling put on it (inspected before the repair began).
      const member = yield* groupOf(id)
      const launch: Ec2LaunchFacts = facts.launch
      const group = terminations.get(id)?.group ?? member ?? launch.autoScalingGroup
      if (group) {
        const known = replacements.get(id)
        if (known) return Option.some(known)
        const gone = yield* instances.describe(id)
        return Option.some(
          yield* groupReplacement(group, {
            old: id,
            before: terminations.get(id)?.before,
            claimed: new Set([...replacements.values()].flatMap((r) => r.instanceId ?? [])),
            terminatedAtMs: terminatedAt(gone?.StateTransitionReason)
          })
        )
      }
      const state = yield* instances.state(id)
      if (!ec2Terminations.has(id) && isGone(state)) {
        // Gone, in no group we can see, and not terminated by us through EC2 (e.g. we restarted): it may have been
        // a group's instance whose group already replaced it. Launching one more could double the capacity.
        return yield* new CloudError({
          operation: "RunInstances",
          message: `node ${nodeName}: autoScaling mode: instance ${id} is ${state} and no Auto Scaling group is known for it; not launching a replacement (the group, if any, does)`,
          retryable: false
        })
      }
      return Option.none()
    })

  return { terminate, replacement }
}
