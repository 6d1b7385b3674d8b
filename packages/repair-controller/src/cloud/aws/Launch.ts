/**
 * `launchReplacement`: RunInstances as planned by launchPlan (LaunchPlan.ts), with the repair's idempotency token
 * as ClientToken, so a launch repeated after a crash or a retry returns the same instance instead of a second
 * one. In Auto Scaling mode the group's replacement is reported instead, when the instance has a group.
 */
import type { EC2Client } from "@aws-sdk/client-ec2"
import { Effect, Option, Result } from "effect"
import {
  CloudError,
  type CloudProvider,
  type InvalidProviderID,
  type NodeRef,
  type Replacement
} from "../CloudProvider.ts"
import type { AutoScalingGroups } from "./AutoScalingGroups.ts"
import { awsInstanceRef } from "./AwsProviderId.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import { replacementFrom } from "./InstanceFacts.ts"
import { clientTokenFor, type LaunchSettings, launchPlan } from "./LaunchPlan.ts"

type LaunchOptions = Parameters<CloudProvider["Service"]["launchReplacement"]>[1]

const cannotLaunch = (node: NodeRef, why: string) =>
  new CloudError({ operation: "RunInstances", message: `node ${node.name}: ${why}`, retryable: false })

export const makeLaunchReplacement =
  (ec2: EC2Client, settings: LaunchSettings, groups: AutoScalingGroups | undefined) =>
  (node: NodeRef, options: LaunchOptions): Effect.Effect<Replacement, CloudError | InvalidProviderID> =>
    Effect.gen(function* () {
      const ref = yield* awsInstanceRef(node.providerID)
      const byGroup = groups ? yield* groups.replacement(node.name, ref, options.facts) : Option.none()
      if (Option.isSome(byGroup)) return byGroup.value
      const plan = launchPlan(options.facts, options.avoidZones, settings, ref)
      if (Result.isFailure(plan)) return yield* cannotLaunch(node, plan.failure)
      const out = yield* awsCall("RunInstances", (abortSignal) =>
        ec2.send(
          new Ec2Sdk.RunInstancesCommand({
            ...plan.success.input,
            ClientToken: clientTokenFor(options.idempotencyToken)
          }),
          { abortSignal }
        )
      )
      const replacement = replacementFrom(out.Instances?.[0], plan.success.zone)
      if (!replacement) return yield* cannotLaunch(node, "RunInstances returned no instance")
      yield* Effect.logInfo("launched replacement", {
        node: node.name,
        replaces: ref.instanceId,
        instanceId: replacement.instanceId,
        zone: replacement.zone
      })
      return replacement
    }).pipe(Effect.withSpan("AwsCloudProvider.launchReplacement"))
