/**
 * The AWS cloud provider (`cloudProvider: aws`). Wire it in the controller's main:
 *
 *   const aws = yield* decodeAwsConfig(rawConfig.aws)          // Schema: AwsConfig
 *   Layer.provide(program, AwsCloudProvider.layer(aws))       // provides CloudProvider
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
