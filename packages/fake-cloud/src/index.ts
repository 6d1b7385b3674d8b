export {
  AdminClient,
  type AdminGroup,
  type AdminInstance,
  type AdminStats,
  type AutoScalingGroupRequest
} from "./admin/AdminClient.ts"
export {
  AUTO_SCALING_API_VERSION,
  runAutoScalingAction
} from "./autoscaling/AutoScalingActions.ts"
export {
  ASG_NAME_TAG,
  AutoScalingError,
  type FakeGroup,
  type GroupSpec,
  GroupStore
} from "./autoscaling/GroupStore.ts"
export { ArcError, type FakeAutoshift, type FakeZonalShift, ZonalShiftStore } from "./arc/ZonalShiftStore.ts"
export { type FakeCloud, type FakeCloudOptions, startFakeCloud } from "./FakeCloudServer.ts"
export { type FaultSpec, Faults } from "./Faults.ts"
export {
  type AdoptRequest,
  Ec2Error,
  type FakeInstance,
  type InstanceStateName,
  InstanceStore,
  type LaunchSource,
  type NodeMirror,
  type RunRequest,
  type StoreOptions
} from "./InstanceStore.ts"
export {
  KWOK_NODE_KEY,
  KWOK_NODE_VALUE,
  kwokNodeMirror,
  type KwokNodeMirrorOptions,
  LAUNCH_TEMPLATE_ID_ANNOTATION,
  LAUNCH_TEMPLATE_NAME_ANNOTATION,
  LAUNCH_TEMPLATE_VERSION_ANNOTATION,
  tagsAsLabels
} from "./KwokNodeMirror.ts"
export { ObjectStore, type StoredObject } from "./s3/ObjectStore.ts"
export { checkPresignedUrl, type KnownCredentials, type S3AuthProblem } from "./s3/PresignedAuth.ts"
export { defaultZones, type FakeZone } from "./zones.ts"
