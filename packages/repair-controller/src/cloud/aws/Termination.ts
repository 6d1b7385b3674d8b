/**
 * `terminate`, never twice (ADR 0005): describe first (an instance shutting down, terminated or unknown is done
 * without a call), then, for an Auto Scaling group member (EC2's `aws:autoscaling:groupName` tag), through its
 * group — shrinking it when the replacement is already up (`replaced`), else letting it launch one — and for any
 * other instance TerminateInstances through the batcher; then wait with backoff until EC2 says `terminated`, for
 * at most `terminationWaitSeconds`.
 */
import type { EC2Client } from "@aws-sdk/client-ec2"
import { Duration, Effect, Option, Schedule } from "effect"
import type { CloudError, InstanceState, InvalidProviderID, NodeRef } from "../CloudProvider.ts"
import type { AutoScalingGroups } from "./AutoScalingGroups.ts"
import type { AwsConfig } from "../../config/AwsConfig.ts"
import { ASG_NAME_TAG } from "./AwsNodeLabels.ts"
import { awsInstanceRef } from "./AwsProviderId.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall, whenNotFound } from "./Ec2ErrorMapping.ts"
import type { Ec2Instances } from "./Ec2Instances.ts"
import { instanceState, isGone } from "./InstanceFacts.ts"
import { makeTerminateBatcher, type TerminateCall } from "./TerminateBatcher.ts"

/** One TerminateInstances call: each id's state after it, or `not-found` when EC2 knows one of them not. */
const terminateInstances =
  (ec2: EC2Client): TerminateCall =>
  (instanceIds) =>
    awsCall("TerminateInstances", (abortSignal) =>
      ec2.send(new Ec2Sdk.TerminateInstancesCommand({ InstanceIds: [...instanceIds] }), { abortSignal })
    ).pipe(
      Effect.map(
        (out): ReadonlyMap<string, InstanceState> =>
          new Map(
            (out.TerminatingInstances ?? []).map((t) => [
              t.InstanceId ?? "",
              instanceState(t.CurrentState?.Name)
            ])
          )
      ),
      whenNotFound("not-found" as const)
    )

const isTerminated = (s: InstanceState) => s === "terminated" || s === "not-found"

/** Polls until terminated (or gone), backing off 1 s -> 15 s, for at most `waitSeconds`; the last state seen. */
const waitTerminated =
  (instances: Ec2Instances, waitSeconds: number) =>
  (instanceId: string, state: InstanceState): Effect.Effect<InstanceState, CloudError> => {
    if (waitSeconds <= 0 || isTerminated(state)) return Effect.succeed(state)
    const backoff = Schedule.min([Schedule.exponential("1 second", 1.5), Schedule.spaced("15 seconds")])
    return instances.state(instanceId).pipe(
      Effect.repeat({ schedule: backoff, until: isTerminated }),
      Effect.timeoutOption(Duration.seconds(waitSeconds)),
      Effect.flatMap((o) => (Option.isSome(o) ? Effect.succeed(o.value) : instances.state(instanceId)))
    )
  }

/** Builds `terminate`; the batcher's loop lives in the current scope. */
export const makeTerminate = Effect.fn("makeTerminate")(function* (
  ec2: EC2Client,
  instances: Ec2Instances,
  groups: AutoScalingGroups,
  config: Pick<AwsConfig, "terminateBatchWindowMs" | "terminationWaitSeconds">
) {
  const terminateBatched = yield* makeTerminateBatcher(
    terminateInstances(ec2),
    Duration.millis(config.terminateBatchWindowMs)
  )
  const wait = waitTerminated(instances, config.terminationWaitSeconds)

  return (
    node: NodeRef,
    options: { readonly replaced?: boolean } = {}
  ): Effect.Effect<InstanceState, CloudError | InvalidProviderID> =>
    Effect.gen(function* () {
      const ref = yield* awsInstanceRef(node.providerID)
      const described = yield* instances.describe(ref.instanceId)
      const before = described ? instanceState(described.State?.Name) : "not-found"
      if (isGone(before)) return yield* wait(ref.instanceId, before)
      const inGroup = described?.Tags?.some((t) => t.Key === ASG_NAME_TAG) ?? false
      // A member that has left its group (detached) is a plain instance again: EC2 terminates it.
      const replaced = options.replaced ?? false
      const viaGroup = inGroup ? yield* groups.terminate(ref.instanceId, replaced) : Option.none()
      const started = Option.isSome(viaGroup) ? viaGroup.value : yield* terminateBatched(ref.instanceId)
      yield* Effect.logInfo("terminating instance", {
        node: node.name,
        instanceId: ref.instanceId,
        via: Option.isSome(viaGroup) ? "autoScaling" : "ec2",
        ...(Option.isSome(viaGroup) ? { decrementDesiredCapacity: replaced } : {}),
        state: started
      })
      return yield* wait(ref.instanceId, started)
    }).pipe(Effect.withSpan("AwsCloudProvider.terminate"))
})
