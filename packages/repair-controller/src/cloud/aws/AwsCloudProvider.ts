/**
 * CloudProvider for AWS, composed of one module per operation: inspect (Inspect.ts, the owner from EC2's tags),
 * describe (Ec2Instances.ts), locate (Ec2Inventory.ts, the fleet inventory), scheduledEvents (Ec2ScheduledEvents.ts), promisedGpus (Ec2InstanceTypes.ts), terminate (Termination.ts), reboot (Reboot.ts), launchReplacement (Launch.ts: RunInstances
 * planned by LaunchPlan.ts for a standalone instance) and activeZonalShifts (ZonalShifts.ts, ARC). Auto Scaling group
 * members are terminated and replaced through their group (AutoScalingGroups.ts, the `autoScaling` port), never with
 * RunInstances.
 *
 * Never terminate twice (ADR 0005): every terminate describes first, TerminateInstances is idempotent on EC2, and
 * RunInstances carries a ClientToken derived from the controller's idempotency token.
 */
import { Effect, Layer } from "effect"
import { type AutoScalingPort, CloudError, CloudProvider, type NodeRef } from "../CloudProvider.ts"
import { makeAutoScalingApi } from "./AutoScalingApi.ts"
import { type AutoScalingGroups, makeAutoScalingGroups } from "./AutoScalingGroups.ts"
import { type AwsClients, closeAwsClients, makeAwsClients } from "./AwsClients.ts"
import type { AwsConfig } from "../../config/AwsConfig.ts"
import { awsInstanceRef } from "./AwsProviderId.ts"
import { makeEc2Instances } from "./Ec2Instances.ts"
import { makeLocate } from "./Ec2Inventory.ts"
import { makeInspect } from "./Inspect.ts"
import { makeLaunchReplacement } from "./Launch.ts"
import { makeReboot } from "./Reboot.ts"
import { makePromisedGpus } from "./Ec2InstanceTypes.ts"
import { makeScheduledEvents } from "./Ec2ScheduledEvents.ts"
import { makeTerminate } from "./Termination.ts"
import { makeZonalShifts } from "./ZonalShifts.ts"
import { makeZoneNames } from "./ZoneNames.ts"

/** ARC is asked about the cluster's ARN: without it nobody can say whether a shift is active (fail closed). */
const NO_CLUSTER_ARN = new CloudError({
  operation: "GetManagedResource",
  message:
    "aws.clusterArn is not set: cannot tell whether a zonal shift is active (set it, or zonalShift.enabled: false)",
  retryable: false
})

/** The Auto Scaling port over the groups: a member's replacement through its group. */
const groupPort = (groups: AutoScalingGroups): AutoScalingPort => ({
  launchReplacement: (node, group, options) =>
    Effect.gen(function* () {
      const ref = yield* awsInstanceRef(node.providerID)
      return yield* groups.replacement(node, ref, group, options)
    }).pipe(Effect.withSpan("AwsCloudProvider.autoScaling.launchReplacement")),
  membersBeforeRemoval: (node) =>
    awsInstanceRef(node.providerID).pipe(
      Effect.flatMap((ref) => groups.membersBeforeRemoval(ref.instanceId)),
      Effect.withSpan("AwsCloudProvider.autoScaling.membersBeforeRemoval")
    )
})

/** Builds the provider over given clients; the scope owns the terminate batcher. */
export const makeAwsCloudProvider = Effect.fn("makeAwsCloudProvider")(function* (
  config: AwsConfig,
  clients: AwsClients
) {
  const { ec2, autoScaling, arc } = clients
  const zones = makeZoneNames(config)
  const instances = makeEc2Instances(ec2)
  const groups = makeAutoScalingGroups(makeAutoScalingApi(autoScaling), instances)
  const launchSettings = { poolLabel: config.poolLabel, subnets: config.subnets, zoneIdOf: zones.idOf }
  return CloudProvider.of({
    name: "aws",
    inspect: makeInspect(instances, config),
    describe: (node: NodeRef) =>
      awsInstanceRef(node.providerID).pipe(Effect.flatMap((ref) => instances.state(ref.instanceId))),
    terminate: yield* makeTerminate(ec2, instances, groups, config),
    reboot: makeReboot(ec2, instances),
    launchReplacement: makeLaunchReplacement(ec2, launchSettings),
    autoScaling: groupPort(groups),
    locate: makeLocate(ec2, config.poolLabel),
    scheduledEvents: makeScheduledEvents(ec2),
    promisedGpus: makePromisedGpus(ec2),
    activeZonalShifts: !config.zonalShift.enabled
      ? Effect.succeed([])
      : config.clusterArn === undefined
        ? Effect.fail(NO_CLUSTER_ARN)
        : yield* makeZonalShifts(arc, ec2, zones, config.clusterArn, config.zonalShift.cacheSeconds)
  })
})

export const AwsCloudProvider = {
  /** The provider for `cloudProvider: aws`, with SDK clients built from `config` (default credential chain). */
  layer: (config: AwsConfig): Layer.Layer<CloudProvider> =>
    Layer.effect(
      CloudProvider,
      Effect.gen(function* () {
        const clients = makeAwsClients(config)
        yield* Effect.addFinalizer(() => Effect.sync(() => closeAwsClients(clients)))
        return yield* makeAwsCloudProvider(config, clients)
      })
    ),
  /** Same, over clients you built (tests pass static credentials). */
  layerWithClients: (config: AwsConfig, clients: AwsClients): Layer.Layer<CloudProvider> =>
    Layer.effect(CloudProvider, makeAwsCloudProvider(config, clients))
}
