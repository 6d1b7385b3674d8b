/**
 * The AWS cloud provider (`cloudProvider: aws`). program.ts imports this module only for `cloudProvider: aws` (it
 * loads the AWS SDK) and wires it as `cloudProviderLayer` does:
 *
 *   decodeAwsConfig({ ...withEnvironmentRegion(config.aws), poolLabel: config.poolLabel }).pipe(
 *     Effect.mapError((e) => new StartupError({ message: `invalid aws: section: ${e.message}` })),
 *     Effect.map(AwsCloudProvider.layer)      // a Layer<CloudProvider>, opened with Layer.unwrap
 *   )
 */
export { activeFromLists, activeFromManagedResource, isZoneShifted } from "./activeZonalShifts.ts"
export { ArcZonalShiftClient, makeArcZonalShiftClient } from "./ArcZonalShiftClient.ts"
export { type AwsClients, makeAwsClients } from "./AwsClients.ts"
export { AwsCloudProvider, makeAwsCloudProvider } from "./AwsCloudProvider.ts"
export {
  AwsConfig,
  type AwsConfigInput,
  AwsSubnet,
  decodeAwsConfig,
  withEnvironmentRegion
} from "../../config/AwsConfig.ts"
export * from "./AwsNodeLabels.ts"
export { clientTokenFor } from "./LaunchPlan.ts"
export {
  type AwsInstanceRef,
  awsInstanceRef,
  formatAwsProviderId,
  parseAwsProviderId
} from "./AwsProviderId.ts"
