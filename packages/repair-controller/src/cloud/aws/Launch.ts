/**
 * `launchReplacement` of a standalone instance: RunInstances as planned by launchPlan (LaunchPlan.ts) from the
 * template EC2 recorded on the old instance, the repair's idempotency token as ClientToken, so a launch repeated
 * after a crash or a retry returns the same instance instead of a second one. Only the standalone owner's adapter
 * calls it (owner/launchTemplateOwner.ts): the owner port alone says whose machine it is (owner/Owners.ts `of`),
 * so an Auto Scaling member is replaced through its group and Karpenter's through a NodeClaim, and an instance
 * without a template plans no launch (launchPlan refuses it).
 */
import type { EC2Client } from "@aws-sdk/client-ec2"
import { Effect, Result } from "effect"
import {
  CloudError,
  type InvalidProviderID,
  type LaunchOptions,
  type NodeRef,
  type Replacement
} from "../CloudProvider.ts"
import { type AwsInstanceRef, awsInstanceRef } from "./AwsProviderId.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import { replacementFrom } from "./InstanceFacts.ts"
import { clientTokenFor, type LaunchSettings, launchPlan } from "./LaunchPlan.ts"

const cannotLaunch = (node: NodeRef, why: string) =>
  new CloudError({ operation: "RunInstances", message: `node ${node.name}: ${why}`, retryable: false })

/** RunInstances for a standalone instance; with `previous` (the repair's record) nothing is launched again. */
const runInstances = (
  ec2: EC2Client,
  settings: LaunchSettings,
  node: NodeRef,
  ref: AwsInstanceRef,
  options: LaunchOptions
) =>
  Effect.gen(function* () {
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
  })

export const makeLaunchReplacement =
  (ec2: EC2Client, settings: LaunchSettings) =>
  (node: NodeRef, options: LaunchOptions): Effect.Effect<Replacement, CloudError | InvalidProviderID> =>
    Effect.gen(function* () {
      const ref = yield* awsInstanceRef(node.providerID)
      return yield* runInstances(ec2, settings, node, ref, options)
    }).pipe(Effect.withSpan("AwsCloudProvider.launchReplacement"))
